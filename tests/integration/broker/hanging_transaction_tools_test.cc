// KIP-664's tools, over the wire (issue 18, finding 4): a transactional batch
// stored without verification opens a transaction its coordinator knows
// nothing of. DescribeProducers finds it on the partition, ListTransactions
// and DescribeTransactions show that no coordinator transaction covers it,
// WriteTxnMarkers (what Kafka's admin abortTransaction sends) ends it, and
// read_committed readers get past it.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/admin_commands.h"
#include "exactly/broker/broker.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "support/kafka_client.h"
#include "support/raw_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawClient;
using protocol::ErrorCode;
using ::testing::HasSubstr;

constexpr char kTopic[] = "hanging";

int16_t Code(ErrorCode c) { return static_cast<int16_t>(c); }

std::unique_ptr<Broker> StartWithoutVerification() {
  BrokerOptions options;
  options.transaction_partition_verification = false;
  auto b = Broker::Start(options);
  EXPECT_TRUE(b.ok()) << b.status();
  if (!b.ok()) return nullptr;
  EXPECT_TRUE((*b)->CreateTopic(kTopic, 1).ok());
  return std::move(*b);
}

protocol::InitProducerIdResponse Init(RawClient& c, const std::string& id) {
  protocol::InitProducerIdRequest init;
  init.transactional_id = id;
  init.transaction_timeout_ms = 600000;  // never times out during the test
  auto r = c.Call<protocol::InitProducerIdResponse>(init, 1);
  EXPECT_EQ(r.error_code, 0);
  return r;
}

int16_t Produce(RawClient& c, std::optional<std::string> transactional_id,
                const protocol::RecordBatchSpec& spec, std::string value) {
  absl::StatusOr<std::string> batch =
      protocol::BuildRecordBatch(spec, {{"k", std::move(value), {}, 0}});
  EXPECT_TRUE(batch.ok()) << batch.status();
  protocol::ProduceRequest request;
  request.transactional_id = std::move(transactional_id);
  request.acks = -1;
  request.timeout_ms = 5000;
  auto& t = request.topics.emplace_back();
  t.name = kTopic;
  t.partitions.push_back({0, {false, {*batch}, {}}, {}});
  auto response = c.Call<protocol::ProduceResponse>(request, 7);
  return response.topics.at(0).partitions.at(0).error_code;
}

// One WriteTxnMarkers of one marker on kTopic[partition]; its error.
int16_t WriteMarker(RawClient& c, int64_t producer_id, int16_t epoch,
                    int32_t coordinator_epoch, bool commit,
                    int32_t partition = 0, int16_t version = 1) {
  protocol::WriteTxnMarkersRequest request;
  protocol::WriteTxnMarkersRequest::Marker m;
  m.producer_id = producer_id;
  m.producer_epoch = epoch;
  m.transaction_result = commit;
  m.topics = {{kTopic, {partition}, {}}};
  m.coordinator_epoch = coordinator_epoch;
  request.markers = {m};
  auto r = c.Call<protocol::WriteTxnMarkersResponse>(request, version);
  EXPECT_EQ(r.markers.size(), 1u);
  if (r.markers.size() != 1) return -1;
  EXPECT_EQ(r.markers[0].producer_id, producer_id);
  EXPECT_EQ(r.markers[0].topics.at(0).name, kTopic);
  EXPECT_EQ(r.markers[0].topics.at(0).partitions.at(0).index, partition);
  return r.markers[0].topics.at(0).partitions.at(0).error_code;
}

protocol::DescribeProducersResponse::Partition DescribeProducers(
    RawClient& c, int32_t partition = 0) {
  protocol::DescribeProducersRequest request;
  request.topics = {{kTopic, {partition}, {}}};
  auto r = c.Call<protocol::DescribeProducersResponse>(request, 0);
  EXPECT_EQ(r.topics.size(), 1u);
  if (r.topics.empty() || r.topics[0].partitions.empty()) return {};
  return r.topics[0].partitions[0];
}

std::vector<std::string> ListIds(RawClient& c,
                                 protocol::ListTransactionsRequest request,
                                 int16_t version = 0) {
  auto r = c.Call<protocol::ListTransactionsResponse>(request, version);
  EXPECT_EQ(r.error_code, 0);
  std::vector<std::string> ids;
  for (const auto& t : r.transactions) ids.push_back(t.transactional_id);
  return ids;
}

struct Hanging {
  std::unique_ptr<Broker> broker;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int64_t live_producer_id = -1;
};

// "stray" writes a transactional batch without AddPartitionsToTxn (stored:
// verification is off), an idempotence-free producer then writes "later",
// and "live" has an ongoing transaction the coordinator knows.
Hanging MakeHanging() {
  Hanging h;
  h.broker = StartWithoutVerification();
  if (h.broker == nullptr) return h;
  RawClient c(h.broker->port(), "hanging-test");
  auto stray = Init(c, "stray");
  h.producer_id = stray.producer_id;
  h.producer_epoch = stray.producer_epoch;
  protocol::RecordBatchSpec spec;
  spec.attributes = protocol::kAttrTransactional;
  spec.producer_id = stray.producer_id;
  spec.producer_epoch = stray.producer_epoch;
  spec.base_sequence = 0;
  spec.base_timestamp = 1700000000000;
  EXPECT_EQ(Produce(c, "stray", spec, "stray"), 0);
  protocol::RecordBatchSpec plain;
  plain.base_timestamp = 1700000000000;
  EXPECT_EQ(Produce(c, std::nullopt, plain, "later"), 0);

  auto live = Init(c, "live");
  h.live_producer_id = live.producer_id;
  protocol::AddPartitionsToTxnRequest add;
  add.transactional_id = "live";
  add.producer_id = live.producer_id;
  add.producer_epoch = live.producer_epoch;
  add.topics = {{kTopic, {0}, {}}};
  auto added = c.Call<protocol::AddPartitionsToTxnResponse>(add, 1);
  EXPECT_EQ(added.topics.at(0).partitions.at(0).error_code, 0);
  return h;
}

TEST(HangingTransactionToolsTest, ApiVersionsAdvertisesThem) {
  auto broker = StartWithoutVerification();
  ASSERT_NE(broker, nullptr);
  RawClient c(broker->port(), "hanging-test");
  auto r =
      c.Call<protocol::ApiVersionsResponse>(protocol::ApiVersionsRequest{}, 0);
  auto range = [&](protocol::ApiKey key) -> std::pair<int, int> {
    for (const auto& a : r.api_keys) {
      if (a.api_key == static_cast<int16_t>(key))
        return {a.min_version, a.max_version};
    }
    return {-1, -1};
  };
  // As Kafka 3.9 serves them.
  EXPECT_EQ(range(protocol::ApiKey::kWriteTxnMarkers), std::make_pair(0, 1));
  EXPECT_EQ(range(protocol::ApiKey::kDescribeProducers), std::make_pair(0, 0));
  EXPECT_EQ(range(protocol::ApiKey::kDescribeTransactions),
            std::make_pair(0, 0));
  EXPECT_EQ(range(protocol::ApiKey::kListTransactions), std::make_pair(0, 1));
}

TEST(HangingTransactionToolsTest, FindDescribeAbortAndReadPast) {
  Hanging h = MakeHanging();
  ASSERT_NE(h.broker, nullptr);
  RawClient c(h.broker->port(), "hanging-admin");
  auto offsets = h.broker->Offsets(kTopic, 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->high_watermark, 2);
  EXPECT_EQ(offsets->last_stable_offset, 0) << "the stray batch holds it";

  // 1. The partition leader knows the open transaction and where it starts.
  auto described = DescribeProducers(c);
  EXPECT_EQ(described.error_code, 0);
  ASSERT_EQ(described.active_producers.size(), 1u);
  const auto& p = described.active_producers[0];
  EXPECT_EQ(p.producer_id, h.producer_id);
  EXPECT_EQ(p.producer_epoch, h.producer_epoch);
  EXPECT_EQ(p.last_sequence, 0);
  EXPECT_EQ(p.last_timestamp, 1700000000000);
  EXPECT_EQ(p.coordinator_epoch, -1) << "no marker yet";
  EXPECT_EQ(p.current_txn_start_offset, 0);
  EXPECT_EQ(DescribeProducers(c, 5).error_code,
            Code(ErrorCode::kUnknownTopicOrPartition));

  // 2. The coordinator has no ongoing transaction for that producer: it is
  // hanging.
  protocol::ListTransactionsRequest all;
  EXPECT_THAT(ListIds(c, all), ::testing::ElementsAre("live", "stray"));
  protocol::ListTransactionsRequest ongoing;
  ongoing.state_filters = {"Ongoing"};
  EXPECT_THAT(ListIds(c, ongoing), ::testing::ElementsAre("live"));
  protocol::ListTransactionsRequest by_producer;
  by_producer.producer_id_filters = {h.producer_id};
  auto listed = c.Call<protocol::ListTransactionsResponse>(by_producer, 0);
  ASSERT_EQ(listed.transactions.size(), 1u);
  EXPECT_EQ(listed.transactions[0].transactional_id, "stray");
  EXPECT_EQ(listed.transactions[0].producer_id, h.producer_id);
  EXPECT_EQ(listed.transactions[0].state, "Empty");
  protocol::ListTransactionsRequest unknown;
  unknown.state_filters = {"Hanging"};
  auto none = c.Call<protocol::ListTransactionsResponse>(unknown, 0);
  EXPECT_TRUE(none.transactions.empty());
  EXPECT_THAT(none.unknown_state_filters, ::testing::ElementsAre("Hanging"));
  // v1's filter: ongoing for longer than an hour (none), or than 0 ms.
  ongoing.duration_filter = 3600000;
  EXPECT_TRUE(ListIds(c, ongoing, 1).empty());
  ongoing.duration_filter = -1;
  EXPECT_THAT(ListIds(c, ongoing, 1), ::testing::ElementsAre("live"));

  protocol::DescribeTransactionsRequest describe;
  describe.transactional_ids = {"live", "stray", "nobody", ""};
  auto txns = c.Call<protocol::DescribeTransactionsResponse>(describe, 0);
  ASSERT_EQ(txns.transactions.size(), 4u);
  const auto& live = txns.transactions[0];
  EXPECT_EQ(live.error_code, 0);
  EXPECT_EQ(live.state, "Ongoing");
  EXPECT_EQ(live.producer_id, h.live_producer_id);
  EXPECT_EQ(live.timeout_ms, 600000);
  EXPECT_GT(live.start_time_ms, 0);
  ASSERT_EQ(live.topics.size(), 1u);
  EXPECT_EQ(live.topics[0].topic, kTopic);
  EXPECT_THAT(live.topics[0].partitions, ::testing::ElementsAre(0));
  EXPECT_EQ(txns.transactions[1].state, "Empty");
  EXPECT_TRUE(txns.transactions[1].topics.empty());
  EXPECT_EQ(txns.transactions[2].error_code,
            Code(ErrorCode::kTransactionalIdNotFound));
  EXPECT_EQ(txns.transactions[3].error_code, Code(ErrorCode::kInvalidRequest));

  // 3. Abort it as Kafka's admin client does. An epoch older than any is
  // refused and writes nothing; epoch -1 (the producer's is 0) fails the whole
  // request as in Kafka, which cannot build a control batch for it.
  ASSERT_EQ(h.producer_epoch, 0);
  EXPECT_EQ(WriteMarker(c, h.producer_id, -2, 0, false),
            Code(ErrorCode::kInvalidProducerEpoch));
  EXPECT_EQ(WriteMarker(c, h.producer_id, -1, 0, false),
            Code(ErrorCode::kUnknownServerError));
  EXPECT_EQ(WriteMarker(c, h.producer_id, h.producer_epoch, 0, false,
                        /*partition=*/7),
            Code(ErrorCode::kUnknownTopicOrPartition));
  offsets = h.broker->Offsets(kTopic, 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->log_end_offset, 2);
  // The tool takes the coordinator epoch DescribeProducers reported (0 when
  // none, as kafka-transactions.sh does).
  EXPECT_EQ(WriteMarker(c, h.producer_id, h.producer_epoch,
                        std::max(p.coordinator_epoch, 0), false),
            0);

  // 4. The LSO moves past the marker, and the stray record is aborted.
  offsets = h.broker->Offsets(kTopic, 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->high_watermark, 3);
  EXPECT_EQ(offsets->last_stable_offset, 3);
  auto log = h.broker->ReadLog(kTopic, 0);
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->size(), 3u);
  EXPECT_TRUE((*log)[2].control);
  EXPECT_FALSE((*log)[2].commit_marker);
  auto after = DescribeProducers(c).active_producers;
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].current_txn_start_offset, -1);
  EXPECT_EQ(after[0].coordinator_epoch, 0);

  auto records = exactly::testing::ConsumeAll(h.broker->bootstrap_servers(),
                                              kTopic, 1, "read_committed", 1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].value, "later");
  EXPECT_EQ(records[0].offset, 1);
}

TEST(HangingTransactionToolsTest, MarkerChecksFollowKafka) {
  Hanging h = MakeHanging();
  ASSERT_NE(h.broker, nullptr);
  RawClient c(h.broker->port(), "hanging-admin");
  // v0 (not flexible) works too.
  EXPECT_EQ(WriteMarker(c, h.producer_id, h.producer_epoch, 3, false, 0, 0), 0);
  // A coordinator epoch older than the last marker's is a zombie
  // coordinator's.
  EXPECT_EQ(WriteMarker(c, h.producer_id, h.producer_epoch, 2, false),
            Code(ErrorCode::kTransactionCoordinatorFenced));
  // With nothing open, Kafka still writes the marker; it changes no LSO.
  EXPECT_EQ(WriteMarker(c, h.producer_id, h.producer_epoch, 3, true), 0);
  auto offsets = h.broker->Offsets(kTopic, 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->log_end_offset, 4);
  EXPECT_EQ(offsets->last_stable_offset, 4);
  // Broker::AbortTransaction, the C++ door, finds nothing open.
  EXPECT_EQ(
      h.broker->AbortTransaction(kTopic, 0, h.producer_id).status().code(),
      absl::StatusCode::kNotFound);
}

TEST(HangingTransactionToolsTest, AdminCommandsFindAndAbortIt) {
  Hanging h = MakeHanging();
  ASSERT_NE(h.broker, nullptr);
  const std::string id = std::to_string(h.producer_id);
  std::string described =
      RunAdminCommand(*h.broker, "describe-producers topic=hanging");
  EXPECT_THAT(described, HasSubstr("ok producer_id=" + id));
  EXPECT_THAT(described, HasSubstr("txn_start_offset=0"));
  EXPECT_EQ(RunAdminCommand(*h.broker,
                            "abort-transaction topic=hanging "
                            "partition=0 producer-id=" +
                                id),
            "ok marker_offset=2");
  EXPECT_THAT(RunAdminCommand(*h.broker, "describe-producers topic=hanging"),
              HasSubstr("txn_start_offset=-1"));
  EXPECT_THAT(
      RunAdminCommand(*h.broker,
                      "abort-transaction topic=hanging producer-id=" + id),
      HasSubstr("error: producer " + id + " has no open transaction"));
  EXPECT_THAT(RunAdminCommand(*h.broker, "abort-transaction topic=hanging"),
              HasSubstr("error: missing producer-id="));
  auto offsets = h.broker->Offsets(kTopic, 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->last_stable_offset, 3);
}

}  // namespace
}  // namespace exactly::broker
