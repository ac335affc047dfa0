// Log compaction's plan (log/compaction.h) on logs built batch by batch: what
// stays, what goes, and that what stays keeps its offsets, sequences, codec
// and a valid CRC.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crc32c/crc32c.h"
#include "gtest/gtest.h"
#include "log/compaction.h"
#include "protocol/record_batch.h"

namespace exactly::broker {
namespace {

using protocol::Record;
using protocol::RecordBatchHeader;

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kRetention = 1000;

struct Kv {
  std::string key;
  std::optional<std::string> value;
};

// A log whose batches are appended at consecutive offsets, as a leader writes
// them.
class TestLog {
 public:
  // A batch of `records`; producer fields when `producer_id` >= 0.
  void Append(const std::vector<Kv>& records, int64_t producer_id = -1,
              int32_t base_sequence = -1, bool transactional = false,
              protocol::Compression codec = protocol::Compression::kNone) {
    protocol::RecordBatchSpec spec;
    spec.base_offset = log_.log_end_offset();
    spec.base_timestamp = kNow - 5000;
    spec.attributes = static_cast<int16_t>(codec);
    if (transactional) spec.attributes |= protocol::kAttrTransactional;
    spec.producer_id = producer_id;
    spec.producer_epoch = producer_id >= 0 ? 0 : -1;
    spec.base_sequence = base_sequence;
    std::vector<protocol::RecordSpec> specs;
    for (size_t i = 0; i < records.size(); ++i) {
      specs.push_back({.key = records[i].key,
                       .value = records[i].value,
                       .timestamp_delta = static_cast<int64_t>(i)});
    }
    Restore(*protocol::BuildRecordBatch(spec, specs));
  }
  void Marker(int64_t producer_id, bool commit) {
    std::string bytes = protocol::BuildControlBatch(
        producer_id, 0,
        commit ? protocol::ControlType::kCommit : protocol::ControlType::kAbort,
        0, kNow - 5000);
    protocol::SetBatchBaseOffset(bytes.data(), log_.log_end_offset());
    Restore(bytes);
  }

  // Plans a clean of everything below `end` (default: all) at `now` and
  // applies it; returns the plan.
  CompactionPlan Clean(int64_t now = kNow, int64_t end = -1,
                       std::unordered_set<int64_t> keep = {}) {
    CompactionOptions o;
    o.end_offset = end < 0 ? log_.log_end_offset() : end;
    o.now_ms = now;
    o.delete_retention_ms = kRetention;
    o.producer_last_batches = std::move(keep);
    absl::StatusOr<CompactionPlan> plan = PlanCompaction(log_.batches(), o);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return {};
    log_.Rewrite(std::move(plan->changes));
    return *std::move(plan);
  }

  // Every record left, offset -> (key, value), with each batch's CRC and
  // header checked on the way.
  std::map<int64_t, Kv> Records() const {
    std::map<int64_t, Kv> out;
    for (const StoredBatch& b : log_.batches()) {
      absl::StatusOr<RecordBatchHeader> h =
          protocol::ParseBatchHeader(b.bytes());
      EXPECT_TRUE(h.ok());
      EXPECT_EQ(h->crc, crc32c::Value(
                            b.bytes().substr(protocol::kBatchAttributesOffset)))
          << "batch at " << b.base_offset();
      EXPECT_EQ(h->size_in_bytes(), b.size);
      auto records = protocol::DecodeRecords({b.header, b.bytes()});
      EXPECT_TRUE(records.ok()) << records.status();
      if (!records.ok()) continue;
      EXPECT_EQ(records->size(), static_cast<size_t>(b.header.record_count));
      if (b.header.is_control()) continue;
      for (const Record& r : *records) {
        EXPECT_GE(r.offset, b.base_offset());
        EXPECT_LE(r.offset, b.last_offset());
        out[r.offset] = {r.key.value_or(""), r.value};
      }
    }
    return out;
  }
  std::vector<int64_t> BatchBases() const {
    std::vector<int64_t> out;
    for (const StoredBatch& b : log_.batches()) out.push_back(b.base_offset());
    return out;
  }
  const StoredBatch* BatchAt(int64_t base) const {
    for (const StoredBatch& b : log_.batches())
      if (b.base_offset() == base) return &b;
    return nullptr;
  }
  PartitionLog& log() { return log_; }

 private:
  void Restore(const std::string& bytes) {
    log_.Restore(bytes, *protocol::ParseBatchHeader(bytes));
  }
  PartitionLog log_;
};

TEST(LogCompactionTest, KeepsTheLatestRecordOfEachKeyAtItsOffset) {
  TestLog log;
  log.Append({{"a", "1"}, {"b", "1"}});  // 0-1
  log.Append({{"a", "2"}, {"c", "1"}});  // 2-3
  log.Append({{"b", "2"}});              // 4
  log.Append({{"z", "1"}});              // 5: last batch of the range
  CompactionPlan plan = log.Clean();
  EXPECT_EQ(plan.records_removed, 2);
  std::map<int64_t, Kv> r = log.Records();
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[2].key, "a");
  EXPECT_EQ(r[2].value, "2");
  EXPECT_EQ(r[3].key, "c");
  EXPECT_EQ(r[4].key, "b");
  EXPECT_EQ(r[4].value, "2");
  EXPECT_EQ(r[5].key, "z");
  // The first batch lost every record and went; offsets did not move.
  EXPECT_EQ(log.BatchBases(), (std::vector<int64_t>{2, 4, 5}));
  EXPECT_EQ(log.log().log_start_offset(), 0);
  EXPECT_EQ(log.log().log_end_offset(), 6);
  // A second clean finds nothing more to do.
  EXPECT_EQ(log.Clean().records_removed, 0);
}

TEST(LogCompactionTest, LeavesEverythingFromTheEndOffsetOn) {
  TestLog log;
  log.Append({{"a", "1"}});  // 0
  log.Append({{"a", "2"}});  // 1
  log.Append({{"a", "3"}});  // 2: not cleanable
  log.Clean(kNow, /*end=*/2);
  // Below 2 only offset 1 is the latest of "a"; 2 is outside the range and
  // does not count.
  std::map<int64_t, Kv> r = log.Records();
  EXPECT_EQ(r.size(), 2u);
  EXPECT_TRUE(r.count(1));
  EXPECT_TRUE(r.count(2));
}

TEST(LogCompactionTest, KeepsAPartlyCleanedBatchItsHeaderFields) {
  TestLog log;
  log.Append({{"a", "1"}, {"b", "1"}, {"c", "1"}}, /*producer_id=*/7,
             /*base_sequence=*/40, false, protocol::Compression::kGzip);
  log.Append({{"b", "2"}});
  log.Clean();
  const StoredBatch* b = log.BatchAt(0);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->header.record_count, 2);
  EXPECT_EQ(b->header.last_offset_delta, 2);  // still ends at offset 2
  EXPECT_EQ(b->header.base_sequence, 40);
  EXPECT_EQ(b->header.producer_id, 7);
  EXPECT_EQ(b->header.compression(), protocol::Compression::kGzip);
  std::map<int64_t, Kv> r = log.Records();
  EXPECT_EQ(r[0].key, "a");
  EXPECT_EQ(r[2].key, "c");
  EXPECT_FALSE(r.count(1));
}

TEST(LogCompactionTest, TombstonesStayForTheDeleteRetentionThenGo) {
  TestLog log;
  log.Append({{"a", "1"}});           // 0
  log.Append({{"a", std::nullopt}});  // 1: delete "a"
  log.Append({{"b", "1"}});           // 2
  CompactionPlan first = log.Clean(kNow);
  // The tombstone stays, stamped with now + delete.retention.ms.
  ASSERT_TRUE(log.Records().count(1));
  EXPECT_FALSE(log.Records().count(0));
  const StoredBatch* stamped = log.BatchAt(1);
  ASSERT_NE(stamped, nullptr);
  EXPECT_TRUE(stamped->header.has_delete_horizon());
  EXPECT_EQ(stamped->header.delete_horizon_ms(), kNow + kRetention);
  EXPECT_EQ(first.next_delete_horizon_ms, kNow + kRetention);
  // The record's own timestamp survives the new base timestamp.
  auto records = protocol::DecodeRecords({stamped->header, stamped->bytes()});
  ASSERT_TRUE(records.ok());
  EXPECT_EQ((*records)[0].timestamp, kNow - 5000);
  // Before the horizon it stays; after it, it goes.
  log.Clean(kNow + kRetention - 1);
  EXPECT_TRUE(log.Records().count(1));
  log.Clean(kNow + kRetention);
  EXPECT_FALSE(log.Records().count(1));
  EXPECT_TRUE(log.Records().count(2));
}

TEST(LogCompactionTest, AbortedTransactionsGoAndTheirMarkerAfterThem) {
  TestLog log;
  log.Append({{"a", "committed"}}, 5, 0, /*transactional=*/true);  // 0
  log.Marker(5, /*commit=*/true);                                  // 1
  log.Append({{"a", "aborted"}}, 5, 1, /*transactional=*/true);    // 2
  log.Marker(5, /*commit=*/false);                                 // 3
  log.Append({{"z", "1"}});                                        // 4
  log.Clean(kNow);
  // The aborted record is gone and did not hide the committed one.
  std::map<int64_t, Kv> r = log.Records();
  EXPECT_EQ(r[0].value, "committed");
  EXPECT_FALSE(r.count(2));
  // Both markers stay this time: each transaction still had a batch here.
  EXPECT_NE(log.BatchAt(1), nullptr);
  EXPECT_NE(log.BatchAt(3), nullptr);
  // Next clean: the ABORT marker's transaction has left the log; it is
  // stamped, then removed after its horizon. The COMMIT marker stays while
  // offset 0 does.
  log.Clean(kNow);
  ASSERT_NE(log.BatchAt(3), nullptr);
  EXPECT_TRUE(log.BatchAt(3)->header.has_delete_horizon());
  log.Clean(kNow + kRetention);
  EXPECT_EQ(log.BatchAt(3), nullptr);
  EXPECT_NE(log.BatchAt(1), nullptr);
  EXPECT_EQ(log.Records().at(0).value, "committed");
}

TEST(LogCompactionTest, ACommitMarkerGoesOnceItsTransactionHasLeft) {
  TestLog log;
  log.Append({{"a", "1"}}, 5, 0, true);  // 0
  log.Marker(5, true);                   // 1
  log.Append({{"a", "2"}});              // 2
  log.Append({{"z", "1"}});              // 3
  log.Clean(kNow);  // offset 0 superseded; its batch seen, the marker stays
  EXPECT_NE(log.BatchAt(1), nullptr);
  EXPECT_EQ(log.BatchAt(0), nullptr);
  log.Clean(kNow);  // stamped
  ASSERT_NE(log.BatchAt(1), nullptr);
  EXPECT_TRUE(log.BatchAt(1)->header.has_delete_horizon());
  log.Clean(kNow + kRetention);
  EXPECT_EQ(log.BatchAt(1), nullptr);
}

TEST(LogCompactionTest, AProducersLastBatchStaysEmptyForItsSequence) {
  TestLog log;
  log.Append({{"a", "1"}}, /*producer_id=*/9, /*base_sequence=*/0);  // 0
  log.Append({{"a", "2"}}, /*producer_id=*/9, /*base_sequence=*/1);  // 1
  log.Append({{"a", "3"}});                                          // 2
  log.Append({{"z", "1"}});                                          // 3
  log.Clean(kNow, -1, /*keep=*/{1});
  // Offset 0 went; producer 9's last batch (offset 1) stays as a header.
  EXPECT_EQ(log.BatchAt(0), nullptr);
  const StoredBatch* last = log.BatchAt(1);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->header.record_count, 0);
  EXPECT_EQ(last->header.base_sequence, 1);
  EXPECT_EQ(last->header.producer_id, 9);
  EXPECT_EQ(last->size, protocol::kBatchHeaderSize);
  EXPECT_EQ(log.Records().size(), 2u);
}

TEST(LogCompactionTest, TheLastBatchOfTheRangeStaysToKeepTheLogEnd) {
  TestLog log;
  log.Append({{"a", "1"}});  // 0
  log.Append({{"a", "2"}});  // 1
  log.Append({{"a", "3"}});  // 2
  // Offsets 0 and 1 are superseded and go; 2, the latest, stays.
  log.Clean();
  EXPECT_EQ(log.BatchBases(), (std::vector<int64_t>{2}));
  // A range whose last batch is emptied keeps it as a header.
  TestLog other;
  other.Append({{"a", "1"}});           // 0
  other.Append({{"a", std::nullopt}});  // 1
  other.Clean(kNow);
  other.Clean(kNow + kRetention);
  EXPECT_EQ(other.BatchBases(), (std::vector<int64_t>{1}));
  EXPECT_EQ(other.BatchAt(1)->header.record_count, 0);
  EXPECT_EQ(other.log().log_end_offset(), 2);
}

TEST(LogCompactionTest, ActiveSegmentRollsBySizeAndByTime) {
  TestLog log;
  for (int i = 0; i < 10; ++i) log.Append({{"k", std::to_string(i)}});
  const auto& batches = log.log().batches();
  const int64_t size = static_cast<int64_t>(batches[0].size);
  // Segments of 3 batches: the active one starts at 9.
  EXPECT_EQ(ActiveSegmentBase(batches, 10, 3 * size, INT64_MAX / 2), 9);
  // One big segment: nothing is cleanable.
  EXPECT_EQ(ActiveSegmentBase(batches, 10, 1 << 30, INT64_MAX / 2), 0);
  // The batches share one timestamp, so segment.ms does not roll them; an
  // empty log's active segment starts at its end.
  EXPECT_EQ(ActiveSegmentBase(batches, 10, 1 << 30, 1), 0);
  EXPECT_EQ(ActiveSegmentBase({}, 42, 100, 100), 42);
}

}  // namespace
}  // namespace exactly::broker
