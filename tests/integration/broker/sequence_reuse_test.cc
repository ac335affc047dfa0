// A transactional client that sends new records under the sequence numbers of
// a batch whose transaction already ended (librdkafka 2.0.2 does, after an
// abort that purged records the broker had: see README, "Aborts and lost
// responses"). Kafka acknowledges such a batch as a duplicate and the new
// records are never stored. The bundled broker does the same by default but
// says so (log and faults().History()); in strict mode it refuses the batch.
// The client here is raw requests, so the test does not depend on which
// librdkafka has the bug.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawClient;
using ::exactly::testing::TempDir;
using protocol::ErrorCode;

constexpr char kTopic[] = "reuse";
constexpr char kTxnId[] = "reuser";

class TransactionalRawClient {
 public:
  explicit TransactionalRawClient(uint16_t port) : raw_(port, "reuser") {}
  // The same producer id and epoch on a new connection (after a restart).
  TransactionalRawClient(uint16_t port, const TransactionalRawClient& before)
      : raw_(port, "reuser"),
        producer_id_(before.producer_id_),
        epoch_(before.epoch_) {}

  void Init() {
    protocol::InitProducerIdRequest init;
    init.transactional_id = kTxnId;
    init.transaction_timeout_ms = 60000;
    auto r = raw_.Call<protocol::InitProducerIdResponse>(init, 1);
    ASSERT_EQ(r.error_code, 0);
    producer_id_ = r.producer_id;
    epoch_ = r.producer_epoch;
  }

  // Adds the partition, retrying while the previous transaction completes.
  void AddPartition() {
    protocol::AddPartitionsToTxnRequest add;
    add.transactional_id = kTxnId;
    add.producer_id = producer_id_;
    add.producer_epoch = epoch_;
    add.topics.push_back({kTopic, {0}, {}});
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto r = raw_.Call<protocol::AddPartitionsToTxnResponse>(add, 1);
      ASSERT_EQ(r.topics.size(), 1u);
      int16_t error = r.topics[0].partitions.at(0).error_code;
      if (error == 0) return;
      ASSERT_EQ(error,
                static_cast<int16_t>(ErrorCode::kConcurrentTransactions));
      absl::SleepFor(absl::Milliseconds(20));
    }
    FAIL() << "the previous transaction never completed";
  }

  // One transactional batch of `values` starting at `base_sequence`.
  protocol::ProduceResponse::Partition Produce(
      int32_t base_sequence, const std::vector<std::string>& values) {
    protocol::RecordBatchSpec spec;
    spec.attributes = protocol::kAttrTransactional;
    spec.producer_id = producer_id_;
    spec.producer_epoch = epoch_;
    spec.base_sequence = base_sequence;
    std::vector<protocol::RecordSpec> records;
    for (const std::string& v : values) records.push_back({"k", v, {}, 0});
    absl::StatusOr<std::string> batch =
        protocol::BuildRecordBatch(spec, records);
    EXPECT_TRUE(batch.ok()) << batch.status();
    protocol::ProduceRequest produce;
    produce.transactional_id = kTxnId;
    produce.acks = -1;
    produce.timeout_ms = 10000;
    produce.topics.push_back({kTopic, {{0, {false, {*batch}, {}}, {}}}, {}});
    // v8: the answer carries an error message.
    auto r = raw_.Call<protocol::ProduceResponse>(produce, 8);
    EXPECT_EQ(r.topics.size(), 1u);
    return r.topics.empty() ? protocol::ProduceResponse::Partition{}
                            : r.topics[0].partitions.at(0);
  }

  int16_t End(bool commit) {
    protocol::EndTxnRequest end;
    end.transactional_id = kTxnId;
    end.producer_id = producer_id_;
    end.producer_epoch = epoch_;
    end.committed = commit;
    return raw_.Call<protocol::EndTxnResponse>(end, 1).error_code;
  }

 private:
  RawClient raw_;
  int64_t producer_id_ = -1;
  int16_t epoch_ = -1;
};

std::unique_ptr<Broker> StartBroker(bool strict, std::string data_dir = "") {
  BrokerOptions options;
  options.strict_sequence_reuse = strict;
  options.data_dir = data_dir;
  absl::StatusOr<std::unique_ptr<Broker>> broker = Broker::Start(options);
  EXPECT_TRUE(broker.ok()) << broker.status();
  if (!broker.ok()) return nullptr;
  if ((*broker)->ListTopics().empty()) {
    EXPECT_TRUE((*broker)->CreateTopic(kTopic, 1).ok());
  }
  return std::move(*broker);
}

int ReuseWarnings(Broker& broker) {
  int n = 0;
  for (const std::string& line : broker.faults().History()) {
    n += line.find("sequence reuse") != std::string::npos;
  }
  return n;
}

std::vector<std::string> StoredValues(Broker& broker) {
  std::vector<std::string> values;
  absl::StatusOr<std::vector<LoggedBatch>> log = broker.ReadLog(kTopic, 0);
  EXPECT_TRUE(log.ok()) << log.status();
  if (!log.ok()) return values;
  for (const LoggedBatch& b : *log) {
    if (b.control) continue;
    for (const LoggedRecord& r : b.records) values.push_back(*r.value);
  }
  return values;
}

// The aborted transaction's batch (sequences 0..1), then a new transaction
// whose first batch reuses 0..1 for new records.
class SequenceReuseTest : public ::testing::TestWithParam<bool> {};

TEST_P(SequenceReuseTest, ReusedSequencesAfterAnEndedTransactionAreReported) {
  const bool strict = GetParam();
  std::unique_ptr<Broker> broker = StartBroker(strict);
  ASSERT_NE(broker, nullptr);
  TransactionalRawClient client(broker->port());
  ASSERT_NO_FATAL_FAILURE(client.Init());

  ASSERT_NO_FATAL_FAILURE(client.AddPartition());
  auto first = client.Produce(0, {"aborted-0", "aborted-1"});
  ASSERT_EQ(first.error_code, 0);
  ASSERT_EQ(first.base_offset, 0);
  // A retry while the transaction is open is an ordinary duplicate.
  auto retry = client.Produce(0, {"aborted-0", "aborted-1"});
  EXPECT_EQ(retry.error_code, 0);
  EXPECT_EQ(retry.base_offset, 0);
  EXPECT_EQ(ReuseWarnings(*broker), 0);
  ASSERT_EQ(client.End(/*commit=*/false), 0);

  ASSERT_NO_FATAL_FAILURE(client.AddPartition());
  auto reused = client.Produce(0, {"new-0", "new-1"});
  EXPECT_EQ(ReuseWarnings(*broker), 1);
  if (strict) {
    EXPECT_EQ(reused.error_code,
              static_cast<int16_t>(ErrorCode::kOutOfOrderSequenceNumber));
    ASSERT_TRUE(reused.error_message.has_value());
    EXPECT_NE(reused.error_message->find("sequence reuse"), std::string::npos)
        << *reused.error_message;
  } else {
    // Kafka's answer: acknowledged at the aborted batch's offset, not stored.
    EXPECT_EQ(reused.error_code, 0);
    EXPECT_EQ(reused.base_offset, 0);
  }
  EXPECT_EQ(StoredValues(*broker),
            (std::vector<std::string>{"aborted-0", "aborted-1"}));
}

INSTANTIATE_TEST_SUITE_P(DefaultAndStrict, SequenceReuseTest,
                         ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Strict" : "LikeKafka";
                         });

// Where the last marker is survives a restart (it is part of the producer
// state in the data dir), so a reuse after one is still recognised.
TEST(SequenceReuseRestartTest, RecognisedAfterTheBrokerRestarts) {
  TempDir dir;
  std::unique_ptr<Broker> broker = StartBroker(/*strict=*/true, dir.path());
  ASSERT_NE(broker, nullptr);
  auto client = std::make_unique<TransactionalRawClient>(broker->port());
  ASSERT_NO_FATAL_FAILURE(client->Init());
  ASSERT_NO_FATAL_FAILURE(client->AddPartition());
  ASSERT_EQ(client->Produce(0, {"aborted-0"}).error_code, 0);
  ASSERT_EQ(client->End(/*commit=*/false), 0);
  // Let the markers land before the restart (the coordinator writes them
  // after it answers EndTxn).
  for (int i = 0; i < 200 && broker->ReadLog(kTopic, 0)->size() < 2; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(broker->ReadLog(kTopic, 0)->size(), 2u);
  broker.reset();

  broker = StartBroker(/*strict=*/true, dir.path());
  ASSERT_NE(broker, nullptr);
  TransactionalRawClient after(broker->port(), *client);
  ASSERT_NO_FATAL_FAILURE(after.AddPartition());
  EXPECT_EQ(after.Produce(0, {"new-0"}).error_code,
            static_cast<int16_t>(ErrorCode::kOutOfOrderSequenceNumber));
  EXPECT_EQ(ReuseWarnings(*broker), 1);
  // The next sequence is still accepted: the producer can go on.
  EXPECT_EQ(after.Produce(1, {"new-1"}).error_code, 0);
}

}  // namespace
}  // namespace exactly::broker
