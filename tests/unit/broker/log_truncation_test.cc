// Where a follower cuts its log after asking its new leader where its latest
// epoch ends (KIP-101/279), and how the log gives up its end.
#include "replication/log_truncation.h"

#include "gtest/gtest.h"
#include "log/partition_log.h"
#include "producer/producer_state.h"
#include "replication/batch_effects.h"

namespace exactly::broker {
namespace {

// A follower log: epoch 0 wrote [0, 100), epoch 2 wrote [100, 150).
LeaderEpochCache FollowerEpochs() {
  LeaderEpochCache c;
  c.Assign(0, 0);
  c.Assign(2, 100);
  return c;
}

TEST(TruncationOffsetTest, TheLeaderKnowsTheEpoch) {
  // Epoch 2 ended at 120 on the leader: the follower's 120..150 go.
  EXPECT_EQ(TruncationOffset(FollowerEpochs(), 150, 90, 2,
                             {.epoch = 2, .end_offset = 120}),
            120);
  // The leader has more of epoch 2 than this log: nothing goes.
  EXPECT_EQ(TruncationOffset(FollowerEpochs(), 150, 90, 2,
                             {.epoch = 2, .end_offset = 170}),
            150);
}

TEST(TruncationOffsetTest, TheLeaderNeverHadTheEpoch) {
  // The leader's largest epoch up to 2 is 0, which ended at 110 there but at
  // 100 here (epoch 2 started at 100 on this log): the logs part at 100.
  EXPECT_EQ(TruncationOffset(FollowerEpochs(), 150, 90, 2,
                             {.epoch = 0, .end_offset = 110}),
            100);
  // Epoch 0 ended earlier on the leader: cut there.
  EXPECT_EQ(TruncationOffset(FollowerEpochs(), 150, 90, 2,
                             {.epoch = 0, .end_offset = 80}),
            80);
}

TEST(TruncationOffsetTest, NoAnswerFallsBackToTheHighWatermark) {
  EXPECT_EQ(TruncationOffset(FollowerEpochs(), 150, 90, 2,
                             {.epoch = kUndefinedEpoch,
                              .end_offset = kUndefinedEpochOffset}),
            90);
}

std::string Batch(int records, int64_t producer_id = -1, int32_t sequence = 0,
                  bool transactional = false) {
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = 1000;
  spec.producer_id = producer_id;
  spec.producer_epoch = producer_id >= 0 ? 0 : -1;
  spec.base_sequence = producer_id >= 0 ? sequence : -1;
  if (transactional) spec.attributes = protocol::kAttrTransactional;
  std::vector<protocol::RecordSpec> rs;
  for (int i = 0; i < records; ++i) rs.push_back({std::nullopt, "v", {}, i});
  return *protocol::BuildRecordBatch(spec, rs);
}

void Append(PartitionLog& log, const std::string& b,
            ProducerStateTable* producers = nullptr,
            TransactionIndex* transactions = nullptr) {
  SharedBuffer buffer = CopyToSharedBuffer(b);
  StoredBatch& stored = log.Append(buffer, buffer.get(), b.size(),
                                   *protocol::ParseBatchHeader(b), 0);
  if (producers != nullptr)
    ApplyBatchEffects(stored, *producers, *transactions);
}

TEST(PartitionLogTruncateTest, CutsWholeBatchesAndBringsTheEndsDown) {
  PartitionLog log;
  for (int i = 0; i < 4; ++i) Append(log, Batch(5));  // 0-4, 5-9, 10-14, 15-19
  log.MarkDurable(20);
  log.AdvanceHighWatermark(20);
  // 12 falls inside the third batch: the whole batch goes, as in Kafka.
  std::vector<StoredBatch> removed = log.TruncateTo(12);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0].base_offset(), 10);
  EXPECT_EQ(removed[1].base_offset(), 15);
  EXPECT_EQ(log.log_end_offset(), 10);
  EXPECT_EQ(log.high_watermark(), 10);
  EXPECT_EQ(log.durable_end_offset(), 10);
  EXPECT_EQ(log.batch_count(), 2u);
  // The next append continues at the new end.
  Append(log, Batch(1));
  EXPECT_EQ(log.batches().back().base_offset(), 10);
  // Truncating at or past the end changes nothing.
  EXPECT_TRUE(log.TruncateTo(11).empty());
  EXPECT_EQ(log.log_end_offset(), 11);
}

TEST(PartitionLogTruncateTest, ReplayedStateForgetsTheCutBatches) {
  // A producer's batches at 0-2 (seq 0-2) and 3-5 (seq 3-5), a transaction
  // opened at 6: cutting at 3 leaves the producer at sequence 2 and no open
  // transaction, as replaying what is left says.
  PartitionLog log;
  ProducerStateTable producers;
  TransactionIndex transactions;
  Append(log, Batch(3, 7, 0), &producers, &transactions);
  Append(log, Batch(3, 7, 3), &producers, &transactions);
  Append(log, Batch(1, 8, 0, /*transactional=*/true), &producers,
         &transactions);
  ASSERT_EQ(producers.Find(7)->last_sequence(), 5);
  ASSERT_TRUE(transactions.IsOpen(8));
  log.TruncateTo(3);
  ProducerStateTable replayed;
  TransactionIndex replayed_transactions;
  for (const StoredBatch& b : log.batches())
    ApplyBatchEffects(b, replayed, replayed_transactions);
  ASSERT_NE(replayed.Find(7), nullptr);
  EXPECT_EQ(replayed.Find(7)->last_sequence(), 2);
  EXPECT_EQ(replayed.Find(8), nullptr);
  EXPECT_FALSE(replayed_transactions.IsOpen(8));
  EXPECT_FALSE(replayed_transactions.FirstUnstableOffset().has_value());
}

}  // namespace
}  // namespace exactly::broker
