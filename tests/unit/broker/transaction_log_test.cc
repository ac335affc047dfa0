// The transaction coordinator's records of __transaction_state: Kafka's
// TransactionLogKey / TransactionLogValue byte for byte, and the replay that
// rebuilds a partition's state from its log (the last record of an id wins, a
// null value deletes it, a damaged record is skipped).
#include "txn/transaction_log.h"

#include <string>

#include "cluster/coordinator_placement.h"
#include "gtest/gtest.h"
#include "protocol/record_batch.h"

namespace exactly::broker {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TxnMetadata Ongoing() {
  TxnMetadata m;
  m.transactional_id = "writer";
  m.producer_id = 4000;
  m.producer_epoch = 7;
  m.timeout_ms = 60000;
  m.state = TxnState::kOngoing;
  m.partitions = {{"orders", 0}, {"orders", 2}, {"audit", 1}};
  m.start_ms = 1700000000000;
  m.last_update_ms = 1700000000123;
  return m;
}

TEST(TransactionLogTest, KeyIsVersionZeroAndTheId) {
  EXPECT_EQ(EncodeTransactionLogKey("t"), Bytes({0, 0, 0, 1, 't'}));
  EXPECT_EQ(*DecodeTransactionLogKey(Bytes({0, 0, 0, 1, 't'})), "t");
  EXPECT_FALSE(DecodeTransactionLogKey(Bytes({0, 1, 0, 1, 't'})).ok());
  EXPECT_FALSE(DecodeTransactionLogKey(Bytes({0, 0, 0, 9, 't'})).ok());
}

TEST(TransactionLogTest, EmptyStateHasKafkasVersionZeroLayout) {
  TxnMetadata m;
  m.transactional_id = "t";
  m.producer_id = 1;
  m.producer_epoch = 2;
  m.timeout_ms = 3;
  m.state = TxnState::kEmpty;
  m.last_update_ms = 4;
  m.start_ms = -1;
  EXPECT_EQ(EncodeTransactionLogValue(m),
            Bytes({0,   0,                                     // version 0
                   0,   0,   0,   0,   0,   0,   0,   1,       // producer id
                   0,   2,                                     // epoch
                   0,   0,   0,   3,                           // timeout
                   0,                                          // Empty
                   0,   0,   0,   0,                           // no partitions
                   0,   0,   0,   0,   0,   0,   0,   4,       // last update
                   255, 255, 255, 255, 255, 255, 255, 255}));  // start -1
}

TEST(TransactionLogTest, ValueRoundTripsWithGroupsAsOffsetsPartitions) {
  TxnMetadata m = Ongoing();
  m.groups = {"eos-group"};
  absl::StatusOr<TxnMetadata> back =
      DecodeTransactionLogValue("writer", EncodeTransactionLogValue(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->transactional_id, "writer");
  EXPECT_EQ(back->producer_id, 4000);
  EXPECT_EQ(back->producer_epoch, 7);
  EXPECT_EQ(back->timeout_ms, 60000);
  EXPECT_EQ(back->state, TxnState::kOngoing);
  EXPECT_EQ(back->start_ms, m.start_ms);
  EXPECT_EQ(back->last_update_ms, m.last_update_ms);
  std::set<std::pair<std::string, int32_t>> expected = m.partitions;
  // A group's offsets are written as its __consumer_offsets partition, as
  // Kafka's AddOffsetsToTxn adds it.
  expected.emplace(std::string(kConsumerOffsetsTopic),
                   CoordinatorPartition("eos-group"));
  EXPECT_EQ(back->partitions, expected);
}

TEST(TransactionLogTest, FlexibleVersionOneIsReadSkippingTaggedFields) {
  const std::string v1 = Bytes({
      0, 1,                                // version 1 (flexible)
      0, 0,   0,    0,    0, 0, 0, 9,      // producer id
      0, 1,                                // epoch
      0, 0,   0x27, 0x10,                  // timeout 10000
      2,                                   // PrepareCommit
      2,                                   // compact array of 1
      2, 'o',                              // topic "o"
      3, 0,   0,    0,    0, 0, 0, 0,  5,  // partitions [0, 5]
      0,                                   // the entry's tagged fields
      0, 0,   0,    0,    0, 0, 0, 11,     // last update
      0, 0,   0,    0,    0, 0, 0, 10,     // start
      1, 0,   8,                           // one tagged field: tag 0, 8 bytes
      0, 0,   0,    0,    0, 0, 0, 3,      // PreviousProducerId 3
  });
  absl::StatusOr<TxnMetadata> m = DecodeTransactionLogValue("x", v1);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->producer_id, 9);
  EXPECT_EQ(m->state, TxnState::kPrepareCommit);
  EXPECT_EQ(m->partitions,
            (std::set<std::pair<std::string, int32_t>>{{"o", 0}, {"o", 5}}));
  EXPECT_EQ(m->start_ms, 10);
}

TEST(TransactionLogTest, BadValuesAreRefusedNotTrusted) {
  EXPECT_FALSE(DecodeTransactionLogValue("x", "").ok());
  EXPECT_FALSE(DecodeTransactionLogValue("x", Bytes({0, 2, 0})).ok());
  std::string truncated = EncodeTransactionLogValue(Ongoing());
  truncated.resize(truncated.size() - 3);
  EXPECT_FALSE(DecodeTransactionLogValue("x", truncated).ok());
  TxnMetadata odd = Ongoing();
  odd.state = static_cast<TxnState>(42);
  EXPECT_FALSE(
      DecodeTransactionLogValue("x", EncodeTransactionLogValue(odd)).ok());
}

void AppendBatch(PartitionLog& log, const std::string& batch) {
  SharedBuffer buffer = CopyToSharedBuffer(batch);
  log.Append(buffer, buffer.get(), batch.size(),
             *protocol::ParseBatchHeader(batch), 0);
}

TEST(TransactionLogTest, ReplayKeepsTheLastStateOfEachIdAndHonoursDeletes) {
  PartitionLog log;
  TxnMetadata a = Ongoing();
  a.transactional_id = "a";
  TxnMetadata b = Ongoing();
  b.transactional_id = "b";
  AppendBatch(log, BuildTransactionLogBatch(a, 1));
  AppendBatch(log, BuildTransactionLogBatch(b, 2));
  a.state = TxnState::kPrepareCommit;
  AppendBatch(log, BuildTransactionLogBatch(a, 3));
  // A tombstone for b, and a record whose value does not decode.
  protocol::RecordBatchSpec spec;
  AppendBatch(
      log,
      *protocol::BuildRecordBatch(
          spec, {{.key = EncodeTransactionLogKey("b"), .value = std::nullopt},
                 {.key = EncodeTransactionLogKey("c"),
                  .value = std::string("\x00\x00\x01", 3)}}));
  // A marker (control batch) is not a state record.
  AppendBatch(log, protocol::BuildControlBatch(
                       7, 0, protocol::ControlType::kCommit, 0, 4));
  size_t skipped = 0;
  std::map<std::string, TxnMetadata> state =
      ReplayTransactionLog(log, &skipped);
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state.at("a").state, TxnState::kPrepareCommit);
  EXPECT_EQ(skipped, 1u);
}

}  // namespace
}  // namespace exactly::broker
