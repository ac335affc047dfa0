// Well-formed batches (valid CRCs) that Apache Kafka refuses before an append
// (issue 18, finding 3): each gets Kafka's error code for its partition (and,
// with acks=0, a closed connection) and leaves the log as it was. The client is
// raw requests, since no librdkafka sends any of these.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "support/raw_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawClient;
using protocol::ErrorCode;

constexpr char kTopic[] = "refused";

class RefusedBatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Broker>> b = Broker::Start(BrokerOptions{});
    ASSERT_TRUE(b.ok()) << b.status();
    broker_ = std::move(*b);
    ASSERT_TRUE(broker_->CreateTopic(kTopic, 2).ok());
  }

  static std::string Batch(protocol::RecordBatchSpec spec) {
    spec.base_timestamp = 1700000000000;
    absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(
        spec, {{"k", "v0", {}, 0}, {"k", "v1", {}, 1}});
    EXPECT_TRUE(batch.ok()) << batch.status();
    return batch.ok() ? *batch : std::string();
  }

  // One Produce request at `version` carrying `records[i]` for partition i.
  protocol::ProduceResponse Produce(int16_t version,
                                    const std::vector<std::string>& records,
                                    std::optional<std::string> txn_id = {},
                                    const std::string& topic = kTopic) {
    RawClient client(broker_->port(), "refused-batches-test");
    return client.Call<protocol::ProduceResponse>(
        ProduceRequestOf(records, std::move(txn_id), topic), version);
  }

  static protocol::ProduceRequest ProduceRequestOf(
      const std::vector<std::string>& records,
      std::optional<std::string> txn_id = {}, const std::string& topic = kTopic,
      int16_t acks = -1) {
    protocol::ProduceRequest request;
    request.transactional_id = std::move(txn_id);
    request.acks = acks;
    request.timeout_ms = 5000;
    protocol::ProduceRequest::Topic& t = request.topics.emplace_back();
    t.name = topic;
    for (size_t i = 0; i < records.size(); ++i) {
      t.partitions.push_back(
          {static_cast<int32_t>(i), {false, {records[i]}, {}}, {}});
    }
    return request;
  }

  // The error of partition `index` in `response`.
  static int16_t ErrorOf(const protocol::ProduceResponse& response,
                         int32_t index) {
    if (response.topics.size() != 1) return -100;
    for (const auto& p : response.topics[0].partitions) {
      if (p.index == index) return p.error_code;
    }
    return -100;
  }

  size_t StoredBatches(int32_t partition) {
    absl::StatusOr<std::vector<LoggedBatch>> log =
        broker_->ReadLog(kTopic, partition);
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? log->size() : 0;
  }

  std::unique_ptr<Broker> broker_;
};

constexpr int16_t Code(ErrorCode code) { return static_cast<int16_t>(code); }

TEST_F(RefusedBatchesTest, TwoBatchesForOnePartitionAreInvalidRecord) {
  std::string one = Batch({});
  for (int16_t version : {3, 7, 8}) {
    protocol::ProduceResponse r = Produce(version, {one + one});
    EXPECT_EQ(ErrorOf(r, 0), Code(ErrorCode::kInvalidRecord))
        << "Produce v" << version;
  }
  EXPECT_EQ(StoredBatches(0), 0u);
  // One batch per partition is fine.
  EXPECT_EQ(ErrorOf(Produce(8, {one}), 0), 0);
  EXPECT_EQ(StoredBatches(0), 1u);
}

TEST_F(RefusedBatchesTest, TransactionalBatchWithoutTransactionalIdIsRefused) {
  protocol::RecordBatchSpec txn;
  txn.attributes = protocol::kAttrTransactional;
  txn.producer_id = 4000;
  txn.producer_epoch = 0;
  txn.base_sequence = 0;
  // Kafka refuses the whole request: the ordinary batch for partition 1 is not
  // stored either.
  for (int16_t version : {3, 8}) {
    protocol::ProduceResponse r = Produce(version, {Batch(txn), Batch({})});
    EXPECT_EQ(ErrorOf(r, 0),
              Code(ErrorCode::kTransactionalIdAuthorizationFailed))
        << "Produce v" << version;
    EXPECT_EQ(ErrorOf(r, 1),
              Code(ErrorCode::kTransactionalIdAuthorizationFailed))
        << "Produce v" << version;
  }
  EXPECT_EQ(StoredBatches(0), 0u);
  EXPECT_EQ(StoredBatches(1), 0u);
  // Without the transactional batch the same request is fine.
  EXPECT_EQ(ErrorOf(Produce(8, {Batch({}), Batch({})}), 1), 0);
  EXPECT_EQ(StoredBatches(1), 1u);
}

TEST_F(RefusedBatchesTest, ProducerIdWithNegativeSequenceIsInvalidRecord) {
  for (int32_t sequence : {-1, -7}) {
    protocol::RecordBatchSpec idempotent;
    idempotent.producer_id = 4001;
    idempotent.producer_epoch = 0;
    idempotent.base_sequence = sequence;
    protocol::ProduceResponse r = Produce(8, {Batch(idempotent)});
    EXPECT_EQ(ErrorOf(r, 0), Code(ErrorCode::kInvalidRecord))
        << "sequence " << sequence;
  }
  EXPECT_EQ(StoredBatches(0), 0u);
  // No producer id, no sequence: an ordinary batch.
  EXPECT_EQ(ErrorOf(Produce(8, {Batch({})}), 0), 0);
  EXPECT_EQ(StoredBatches(0), 1u);
}

TEST_F(RefusedBatchesTest, ZstdBelowProduceV7IsUnsupportedCompressionType) {
  protocol::RecordBatchSpec zstd;
  zstd.attributes = static_cast<int16_t>(protocol::Compression::kZstd);
  std::string batch = Batch(zstd);
  for (int16_t version : {3, 5, 6}) {
    protocol::ProduceResponse r = Produce(version, {batch});
    EXPECT_EQ(ErrorOf(r, 0), Code(ErrorCode::kUnsupportedCompressionType))
        << "Produce v" << version;
  }
  EXPECT_EQ(StoredBatches(0), 0u);
  // Produce v7 is where zstd begins (KIP-110).
  EXPECT_EQ(ErrorOf(Produce(7, {batch}), 0), 0);
  EXPECT_EQ(StoredBatches(0), 1u);
}

TEST_F(RefusedBatchesTest, KeylessRecordsOnACompactedTopicAreEachNamed) {
  ASSERT_TRUE(
      broker_->CreateTopic("compacted", 1, {{"cleanup.policy", "compact"}})
          .ok());
  absl::StatusOr<std::string> batch =
      protocol::BuildRecordBatch({}, {{"k0", "v0", {}, 0},
                                      {std::nullopt, "v1", {}, 0},
                                      {"k2", "v2", {}, 0},
                                      {std::nullopt, "v3", {}, 0}});
  ASSERT_TRUE(batch.ok()) << batch.status();
  // As Kafka's LogValidator: INVALID_RECORD, and from v8 each keyless record's
  // index in the batch.
  protocol::ProduceResponse r = Produce(8, {*batch}, {}, "compacted");
  ASSERT_EQ(r.topics.size(), 1u);
  ASSERT_EQ(r.topics[0].partitions.size(), 1u);
  const auto& p = r.topics[0].partitions[0];
  EXPECT_EQ(p.error_code, Code(ErrorCode::kInvalidRecord));
  ASSERT_EQ(p.record_errors.size(), 2u);
  EXPECT_EQ(p.record_errors[0].batch_index, 1);
  EXPECT_EQ(p.record_errors[1].batch_index, 3);
  EXPECT_TRUE(p.record_errors[0].message.has_value());
  absl::StatusOr<std::vector<LoggedBatch>> log =
      broker_->ReadLog("compacted", 0);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE(log->empty());
}

TEST_F(RefusedBatchesTest, AcksZeroRefusedClosesTheConnection) {
  // No response can carry the error: as Kafka, the broker closes the
  // connection (the producer then refreshes its metadata).
  RawClient client(broker_->port(), "refused-batches-test");
  client.Send(ProduceRequestOf({Batch({})}, {}, "absent", /*acks=*/0), 8);
  protocol::MetadataRequest metadata;
  metadata.topics.emplace();
  client.Send(metadata, 8);
  EXPECT_FALSE(client.Receive<protocol::MetadataResponse>(8).ok());

  // A batch it takes: no answer, the connection stays, the next request is
  // answered.
  RawClient open(broker_->port(), "refused-batches-test");
  open.Send(ProduceRequestOf({Batch({})}, {}, kTopic, /*acks=*/0), 8);
  open.Send(metadata, 8);
  EXPECT_TRUE(open.Receive<protocol::MetadataResponse>(8).ok());
  EXPECT_EQ(StoredBatches(0), 1u);
}

}  // namespace
}  // namespace exactly::broker
