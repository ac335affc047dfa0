// The idempotence rules, per (partition, producer id): duplicates of the last
// five batches are recognised, gaps and old epochs refused, a new epoch starts
// at sequence 0, sequences wrap.
#include "producer/producer_state.h"

#include "gtest/gtest.h"

namespace exactly::broker {
namespace {

using protocol::ErrorCode;
using protocol::RecordBatchHeader;
using Verdict = SequenceCheck::Verdict;

RecordBatchHeader Batch(int64_t pid, int16_t epoch, int32_t first_seq,
                        int32_t count, int64_t offset) {
  RecordBatchHeader h;
  h.producer_id = pid;
  h.producer_epoch = epoch;
  h.base_sequence = first_seq;
  h.last_offset_delta = count - 1;
  h.record_count = count;
  h.base_offset = offset;
  return h;
}

class ProducerStateTest : public ::testing::Test {
 protected:
  // Appends when the table says so; returns the verdict.
  SequenceCheck Offer(const RecordBatchHeader& h) {
    SequenceCheck c = table_.Check(h);
    if (c.verdict == Verdict::kAppend) table_.OnAppend(h);
    return c;
  }
  ProducerStateTable table_;
};

TEST_F(ProducerStateTest, NewProducerStartsAnywhereThenMustBeContiguous) {
  EXPECT_EQ(Offer(Batch(1, 0, 7, 3, 0)).verdict,
            Verdict::kAppend);  // no state: accepted
  EXPECT_EQ(Offer(Batch(1, 0, 10, 2, 3)).verdict, Verdict::kAppend);
  SequenceCheck gap = Offer(Batch(1, 0, 13, 1, 5));  // expected 12
  EXPECT_EQ(gap.verdict, Verdict::kReject);
  EXPECT_EQ(gap.error, ErrorCode::kOutOfOrderSequenceNumber);
}

TEST_F(ProducerStateTest,
       ExactRetryOfAnyOfTheLastFiveIsADuplicateWithItsOriginalOffset) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_EQ(Offer(Batch(1, 0, i * 10, 10, 100 + i * 10)).verdict,
              Verdict::kAppend);
  }
  // Batches 2..6 are remembered; 0 and 1 have aged out.
  for (int i = 2; i < 7; ++i) {
    SequenceCheck c = Offer(Batch(1, 0, i * 10, 10, -1));
    ASSERT_EQ(c.verdict, Verdict::kDuplicate) << i;
    EXPECT_EQ(c.duplicate_of->first_offset, 100 + i * 10);
  }
  EXPECT_EQ(Offer(Batch(1, 0, 10, 10, -1)).verdict, Verdict::kReject);
  // Same first sequence, different last: not a retry of that batch, and out of
  // order.
  EXPECT_EQ(Offer(Batch(1, 0, 60, 5, -1)).verdict, Verdict::kReject);
}

TEST_F(ProducerStateTest, OlderEpochIsFencedNewerEpochMustStartAtZero) {
  ASSERT_EQ(Offer(Batch(1, 3, 0, 5, 0)).verdict, Verdict::kAppend);
  SequenceCheck old = Offer(Batch(1, 2, 5, 1, 5));
  EXPECT_EQ(old.error, ErrorCode::kInvalidProducerEpoch);
  SequenceCheck bad_bump = Offer(Batch(1, 4, 5, 1, 5));
  EXPECT_EQ(bad_bump.error, ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(Offer(Batch(1, 4, 0, 1, 5)).verdict, Verdict::kAppend);
  // After the bump the old epoch's batches are no longer duplicates but fenced.
  EXPECT_EQ(Offer(Batch(1, 3, 0, 5, -1)).error,
            ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(table_.Find(1)->epoch, 4);
}

TEST_F(ProducerStateTest, MarkerWithNewerEpochFencesAndResetsSequence) {
  ASSERT_EQ(Offer(Batch(1, 0, 0, 5, 0)).verdict, Verdict::kAppend);
  table_.OnMarker(1, 1, /*coordinator_epoch=*/0, /*marker_offset=*/5);
  EXPECT_EQ(Offer(Batch(1, 0, 5, 1, 6)).error,
            ErrorCode::kInvalidProducerEpoch);
  EXPECT_EQ(Offer(Batch(1, 1, 3, 1, 6)).error,
            ErrorCode::kOutOfOrderSequenceNumber);
  EXPECT_EQ(Offer(Batch(1, 1, 0, 1, 6)).verdict, Verdict::kAppend);
}

TEST_F(ProducerStateTest, SequencesWrapAfterInt32Max) {
  ASSERT_EQ(Offer(Batch(1, 0, INT32_MAX - 4, 5, 0)).verdict, Verdict::kAppend);
  EXPECT_EQ(table_.Find(1)->last_sequence(), INT32_MAX);
  EXPECT_EQ(Offer(Batch(1, 0, 0, 3, 5)).verdict, Verdict::kAppend);
  // A batch that itself wraps: INT32_MAX-1 .. 1.
  ProducerStateTable t;
  ASSERT_EQ(t.Check(Batch(2, 0, INT32_MAX - 1, 4, 0)).verdict,
            Verdict::kAppend);
  t.OnAppend(Batch(2, 0, INT32_MAX - 1, 4, 0));
  EXPECT_EQ(t.Find(2)->last_sequence(), 1);
  EXPECT_EQ(t.Check(Batch(2, 0, 2, 1, 4)).verdict, Verdict::kAppend);
  EXPECT_EQ(t.Check(Batch(2, 0, INT32_MAX - 1, 4, -1)).verdict,
            Verdict::kDuplicate);
}

TEST_F(ProducerStateTest, ProducersAreIndependentAndNonIdempotentBatchesPass) {
  ASSERT_EQ(Offer(Batch(1, 0, 0, 5, 0)).verdict, Verdict::kAppend);
  EXPECT_EQ(Offer(Batch(2, 0, 0, 5, 5)).verdict, Verdict::kAppend);
  RecordBatchHeader plain;  // producer id -1
  plain.record_count = 1;
  EXPECT_EQ(Offer(plain).verdict, Verdict::kAppend);
  EXPECT_EQ(Offer(plain).verdict, Verdict::kAppend);
}

TEST_F(ProducerStateTest, SerializedEntryReadsBackEqual) {
  for (int i = 0; i < 6; ++i) Offer(Batch(1, 2, i * 3, 3, i * 3));
  table_.OnMarker(1, 2, 7, 18);
  const ProducerEntry* e = table_.Find(1);
  ASSERT_NE(e, nullptr);
  absl::StatusOr<ProducerEntry> back =
      ProducerStateTable::Deserialize(ProducerStateTable::Serialize(*e));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *e);
  EXPECT_EQ(back->last_marker_offset, 18);
  EXPECT_FALSE(ProducerStateTable::Deserialize("junk").ok());
}

TEST_F(ProducerStateTest, FormatZeroEntriesFromOlderDataDirsStillRead) {
  // version 0, epoch 3, coordinator epoch 1, one batch 0..1 at offset 40.
  std::string v0("\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x01", 11);
  v0 += std::string("\x00\x00\x00\x00\x00\x00\x00\x01", 8);
  v0 += std::string("\x00\x00\x00\x00\x00\x00\x00\x28\x00\x00\x00\x01", 12);
  v0 += std::string(8, '\0');
  absl::StatusOr<ProducerEntry> e = ProducerStateTable::Deserialize(v0);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->epoch, 3);
  EXPECT_EQ(e->last_marker_offset, -1);
  ASSERT_EQ(e->batches.size(), 1u);
  EXPECT_EQ(e->batches[0].first_offset, 40);
}

// A duplicate of a transactional batch is a retry while its transaction is
// open; once a marker has ended that transaction, the same sequences can only
// be new records reusing them (librdkafka after an abort that purged records
// the broker had), which the broker reports.
TEST_F(ProducerStateTest, DuplicateOfABatchWhoseTransactionEndedIsFlagged) {
  RecordBatchHeader first = Batch(1, 0, 10, 2, 100);
  first.attributes |= protocol::kAttrTransactional;
  ASSERT_EQ(Offer(first).verdict, Verdict::kAppend);
  RecordBatchHeader retry = first;
  retry.base_offset = -1;
  SequenceCheck open = Offer(retry);
  ASSERT_EQ(open.verdict, Verdict::kDuplicate);
  EXPECT_FALSE(open.transaction_ended);

  table_.OnMarker(1, 0, 0, /*marker_offset=*/102);  // the abort marker
  SequenceCheck reused = Offer(retry);
  ASSERT_EQ(reused.verdict, Verdict::kDuplicate);
  EXPECT_TRUE(reused.transaction_ended);
  EXPECT_EQ(reused.duplicate_of->first_offset, 100);

  // The next transaction's own batch, retried before its marker: a retry.
  RecordBatchHeader next = Batch(1, 0, 12, 1, 103);
  next.attributes |= protocol::kAttrTransactional;
  ASSERT_EQ(Offer(next).verdict, Verdict::kAppend);
  next.base_offset = -1;
  EXPECT_FALSE(Offer(next).transaction_ended);
}

}  // namespace
}  // namespace exactly::broker
