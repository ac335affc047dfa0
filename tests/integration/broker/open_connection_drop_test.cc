// DropProduceResponsesKeepOpen (issue 23): the broker appends a Produce
// request and never answers it, while the connection stays open. A raw client
// sees the connection keep answering later requests; a librdkafka idempotent
// producer times the request out (socket.timeout.ms), retries it, and the
// broker's log still holds every record exactly once.
#include <librdkafka/rdkafka.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "admin/admin_commands.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/faults.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "support/kafka_client.h"
#include "support/raw_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::DeliveryCounter;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RawClient;
using ::exactly::testing::RdKafkaPtr;

constexpr char kKind[] = "dropped_produce_response_kept_open";

std::unique_ptr<Broker> StartBroker() {
  absl::StatusOr<std::unique_ptr<Broker>> b = Broker::Start({});
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? std::move(*b) : nullptr;
}

int64_t Injected(Broker& broker, const std::string& kind) {
  std::map<std::string, int64_t> counts = broker.faults().InjectedCounts();
  auto it = counts.find(kind);
  return it == counts.end() ? 0 : it->second;
}

// A record batch of one record, `value`.
std::string OneRecord(const std::string& value) {
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = 1700000000000;
  absl::StatusOr<std::string> batch =
      protocol::BuildRecordBatch(spec, {{"k", value, {}, 0}});
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? *batch : std::string();
}

// A Produce request of `batch` to partition 0 of `topic`; it refers to
// `batch`, which must outlive it.
protocol::ProduceRequest ProduceOf(const std::string& topic,
                                   const std::string& batch) {
  protocol::ProduceRequest request;
  request.acks = -1;
  request.timeout_ms = 5000;
  protocol::ProduceRequest::Topic& t = request.topics.emplace_back();
  t.name = topic;
  t.partitions.push_back({0, {false, {batch}, {}}, {}});
  return request;
}

TEST(OpenConnectionDropTest, ResponseIsNeverSentAndTheConnectionStaysOpen) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker);
  ASSERT_TRUE(broker->CreateTopic("open", 1).ok());
  broker->faults().DropProduceResponsesKeepOpen(/*count=*/1);

  RawClient client(broker->port(), "open-connection-drop-test");
  const std::string v0 = OneRecord("v0");
  client.Send(ProduceOf("open", v0), 7);
  // The next answer on the connection is the Metadata request's: Receive
  // fails on an answer to another request (the produce) or a closed
  // connection.
  protocol::MetadataRequest metadata;
  metadata.topics.emplace();
  client.Send(metadata, 8);
  absl::StatusOr<protocol::MetadataResponse> answer =
      client.Receive<protocol::MetadataResponse>(8);
  ASSERT_TRUE(answer.ok()) << answer.status();

  // The batch was appended before its response was dropped.
  absl::StatusOr<PartitionOffsets> offsets = broker->Offsets("open", 0);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_EQ(offsets->log_end_offset, 1);
  EXPECT_EQ(Injected(*broker, kKind), 1);
  EXPECT_EQ(Injected(*broker, "dropped_produce_response"), 0);

  // The fault is spent: the next produce on the same connection is answered.
  const std::string v1 = OneRecord("v1");
  protocol::ProduceResponse produced =
      client.Call<protocol::ProduceResponse>(ProduceOf("open", v1), 7);
  ASSERT_EQ(produced.topics.size(), 1u);
  ASSERT_EQ(produced.topics[0].partitions.size(), 1u);
  EXPECT_EQ(produced.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(produced.topics[0].partitions[0].base_offset, 1);
  EXPECT_EQ(Injected(*broker, kKind), 1);
}

TEST(OpenConnectionDropTest, IdempotentProducerRetriesAfterItsTimeout) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker);
  ASSERT_TRUE(broker->CreateTopic("open-idem", 1).ok());
  DeliveryCounter counter;
  // socket.timeout.ms is librdkafka's own timeout for a request in flight
  // (its request.timeout.ms is only the broker's wait for acks=all), so the
  // test waits about 1 s per dropped response, not 60.
  RdKafkaPtr p = NewClient(RD_KAFKA_PRODUCER,
                           {{"bootstrap.servers", broker->bootstrap_servers()},
                            {"enable.idempotence", "true"},
                            {"linger.ms", "1"},
                            {"batch.num.messages", "20"},
                            {"socket.timeout.ms", "1000"},
                            {"message.timeout.ms", "120000"},
                            {"retry.backoff.ms", "20"},
                            {"reconnect.backoff.ms", "20"},
                            {"reconnect.backoff.max.ms", "200"}},
                           &DeliveryCounter::OnDelivery, &counter);
  ASSERT_TRUE(p);
  // Every 5th produce request, 3 times, once the producer is connected.
  ASSERT_EQ(ProduceOne(p.get(), "open-idem", 0, "k", "warm-up"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  broker->faults().DropProduceResponsesKeepOpen(/*count=*/3, /*one_in=*/5);

  constexpr int kRecords = 600;
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_EQ(ProduceOne(p.get(), "open-idem", 0, "k", absl::StrCat("v", i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    // Spread the records over many requests.
    if (i % 10 == 9) rd_kafka_poll(p.get(), 5);
  }
  ASSERT_EQ(rd_kafka_flush(p.get(), 120000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(counter.failed.load(), 0) << rd_kafka_err2name(
      static_cast<rd_kafka_resp_err_t>(counter.last_error.load()));
  EXPECT_EQ(counter.delivered.load(), kRecords + 1);
  EXPECT_EQ(Injected(*broker, kKind), 3);
  EXPECT_EQ(Injected(*broker, "dropped_produce_response"), 0);

  // The log holds warm-up, v0..v599, each once, in order.
  absl::StatusOr<std::vector<LoggedBatch>> log =
      broker->ReadLog("open-idem", 0);
  ASSERT_TRUE(log.ok()) << log.status();
  std::vector<std::string> values;
  for (const LoggedBatch& batch : *log) {
    for (const LoggedRecord& r : batch.records) values.push_back(*r.value);
  }
  ASSERT_EQ(values.size(), static_cast<size_t>(kRecords + 1))
      << "a retried batch was appended twice, or one is missing";
  EXPECT_EQ(values[0], "warm-up");
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_EQ(values[i + 1], absl::StrCat("v", i)) << "offset " << i + 1;
  }
}

TEST(OpenConnectionDropTest, AdminCommand) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker);
  EXPECT_EQ(RunAdminCommand(*broker,
                            "drop-produce-responses-keep-open count=2 "
                            "one-in=3 topic=t"),
            "ok");
  std::string history = RunAdminCommand(*broker, "history");
  EXPECT_NE(history.find("keeping the connection open"), std::string::npos)
      << history;
  EXPECT_EQ(
      RunAdminCommand(*broker, "drop-produce-responses-keep-open count=x"),
      RunAdminCommand(*broker, "drop-produce-responses count=x"));
}

}  // namespace
}  // namespace exactly::broker
