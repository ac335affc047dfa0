// The partition log and its transaction index: offsets, high watermark, reads by offset and
// size, timestamps, deletion, and the LSO / aborted-transaction bookkeeping.
#include "log/partition_log.h"

#include "gtest/gtest.h"
#include "log/transaction_index.h"

namespace exactly::broker {
namespace {

std::string Batch(int records, int64_t base_timestamp) {
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = base_timestamp;
  std::vector<protocol::RecordSpec> rs;
  for (int i = 0; i < records; ++i) rs.push_back({std::nullopt, "v", {}, i});
  return *protocol::BuildRecordBatch(spec, rs);
}

void Append(PartitionLog& log, int records, int64_t ts) {
  std::string b = Batch(records, ts);
  SharedBuffer buffer = CopyToSharedBuffer(b);
  log.Append(buffer, buffer.get(), b.size(), *protocol::ParseBatchHeader(b), 0);
}

TEST(PartitionLogTest, OffsetsAndHighWatermark) {
  PartitionLog log;
  Append(log, 3, 1000);
  Append(log, 2, 2000);
  EXPECT_EQ(log.log_end_offset(), 5);
  EXPECT_EQ(log.high_watermark(), 0) << "nothing is visible before the commit";
  log.AdvanceHighWatermark(5);
  EXPECT_EQ(log.high_watermark(), 5);
  // The stored copy carries the broker's offsets.
  EXPECT_EQ(log.batches()[1].base_offset(), 3);
  EXPECT_EQ(protocol::ParseBatchHeader(log.batches()[1].bytes())->base_offset, 3);
}

TEST(PartitionLogTest, ReadsWholeBatchesWithinLimits) {
  PartitionLog log;
  for (int i = 0; i < 4; ++i) Append(log, 2, 1000 + i);  // offsets 0-1, 2-3, 4-5, 6-7
  log.AdvanceHighWatermark(8);
  size_t one = log.batches()[0].size;
  // From the middle of a batch: that batch first.
  LogSlice s = log.Read(3, 8, SIZE_MAX, true);
  EXPECT_EQ(s.batches.size(), 3u);
  EXPECT_EQ(s.next_offset, 8);
  // A limit inside a batch stops before it.
  EXPECT_EQ(log.Read(0, 5, SIZE_MAX, true).batches.size(), 2u);
  // Byte budget: two batches fit, not three; the first always comes (KIP-74).
  EXPECT_EQ(log.Read(0, 8, 2 * one + 1, false).batches.size(), 2u);
  EXPECT_EQ(log.Read(0, 8, 1, true).batches.size(), 1u);
  EXPECT_EQ(log.Read(0, 8, 1, false).batches.size(), 0u);
}

TEST(PartitionLogTest, OffsetForTimestamp) {
  PartitionLog log;
  Append(log, 3, 1000);  // timestamps 1000, 1001, 1002
  Append(log, 3, 2000);
  log.AdvanceHighWatermark(6);
  EXPECT_EQ(log.OffsetForTimestamp(0)->offset, 0);
  EXPECT_EQ(log.OffsetForTimestamp(1001)->offset, 1);
  EXPECT_EQ(log.OffsetForTimestamp(1500)->offset, 3);
  EXPECT_EQ(log.OffsetForTimestamp(2002)->timestamp, 2002);
  EXPECT_FALSE(log.OffsetForTimestamp(3000).has_value());
}

TEST(PartitionLogTest, DeleteBeforeAndRetention) {
  PartitionLog log;
  for (int i = 0; i < 4; ++i) Append(log, 2, 1000);
  log.AdvanceHighWatermark(8);
  size_t one = log.batches()[0].size;
  // Keep at most two batches, never past offset 8.
  EXPECT_EQ(log.RetentionStartOffset(static_cast<int64_t>(2 * one), 8), 4);
  // ...but never past the limit (an open transaction at offset 2).
  EXPECT_EQ(log.RetentionStartOffset(static_cast<int64_t>(one), 2), 2);
  EXPECT_EQ(log.RetentionStartOffset(-1, 8), 0) << "off by default";
  std::vector<int64_t> removed = log.DeleteBefore(3);  // inside the second batch
  EXPECT_EQ(removed, (std::vector<int64_t>{0}));
  EXPECT_EQ(log.log_start_offset(), 3);
  EXPECT_EQ(log.batch_count(), 3u);
  EXPECT_EQ(log.size_in_bytes(), 3 * one);
}

TEST(TransactionIndexTest, LastStableOffsetAndAbortedRanges) {
  TransactionIndex idx;
  idx.OnTransactionalBatch(1, 10);
  idx.OnTransactionalBatch(2, 12);
  idx.OnTransactionalBatch(1, 15);  // same open transaction
  EXPECT_EQ(idx.FirstUnstableOffset(), 10);
  idx.OnMarker(1, /*commit=*/false, 20);
  EXPECT_EQ(idx.FirstUnstableOffset(), 12);
  idx.OnMarker(2, /*commit=*/true, 21);
  EXPECT_FALSE(idx.FirstUnstableOffset().has_value());
  idx.OnTransactionalBatch(1, 30);
  idx.OnMarker(1, false, 33);
  EXPECT_EQ(idx.CollectAborted(0, 100).size(), 2u);
  EXPECT_EQ(idx.CollectAborted(21, 100), (std::vector<AbortedTxn>{{1, 30, 33}}));
  EXPECT_EQ(idx.CollectAborted(0, 10), (std::vector<AbortedTxn>{}));
  EXPECT_EQ(idx.CollectAborted(20, 25), (std::vector<AbortedTxn>{{1, 10, 20}}));
  idx.DeleteBefore(21);
  EXPECT_EQ(idx.aborted().size(), 1u);
  // A marker for a producer with nothing open here changes nothing.
  idx.OnMarker(9, false, 40);
  EXPECT_EQ(idx.aborted().size(), 1u);
}

}  // namespace
}  // namespace exactly::broker
