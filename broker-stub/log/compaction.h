// Log compaction (cleanup.policy=compact): which records of a partition's
// cleanable range go, decided as Kafka's log cleaner decides it. Pure: it
// reads the batches and says what to write instead; cluster/log_cleaner.cc
// applies the plan to the log and the store.
//
// For each key only the record with the latest offset stays. A tombstone (a
// null value) is first stamped with a delete horizon (now +
// delete.retention.ms, KIP-534) and removed by a clean after that horizon, so
// a consumer reading from the start within delete.retention.ms still sees the
// delete. Records of aborted transactions go. A transaction marker stays while
// any batch of its transaction is in the log, then is stamped and removed like
// a tombstone. Offsets never change: a rewritten batch keeps its base offset,
// last offset delta, producer fields and base sequence, and a batch emptied of
// records is removed, leaving a gap, unless it is the last batch of an active
// producer (its sequence and epoch must survive for deduplication and
// fencing) or the last batch of the cleaned range; those stay as header-only
// batches.
#ifndef EXACTLY_BROKER_LOG_COMPACTION_H_
#define EXACTLY_BROKER_LOG_COMPACTION_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"
#include "log/partition_log.h"

namespace exactly::broker {

// What the cleaner remembers of a partition between cleans (Kafka's
// cleaner-offset-checkpoint; in memory here, so a restarted broker treats the
// whole log as dirty once).
struct CleanerCheckpoint {
  int64_t first_dirty_offset = 0;  // where the last clean ended
  std::optional<int64_t> next_delete_horizon_ms;
};

struct CompactionOptions {
  // Batches below this offset are cleaned (the first uncleanable offset: the
  // active segment, the last stable offset, min.compaction.lag.ms).
  int64_t end_offset = 0;
  int64_t now_ms = 0;
  int64_t delete_retention_ms = 86400000;
  // Last offsets of batches kept even when emptied: each active producer's
  // last batch.
  std::unordered_set<int64_t> producer_last_batches;
};

struct CompactionPlan {
  // The batches the clean changes, in index order (PartitionLog::Rewrite).
  std::vector<PartitionLog::BatchRewrite> changes;
  int64_t records_removed = 0;
  // The earliest delete horizon of a tombstone or marker that stays only
  // because its horizon has not passed: a clean after it removes something
  // even if nothing new was written.
  std::optional<int64_t> next_delete_horizon_ms;
};

// Plans the clean of `batches` below `options.end_offset`. Fails (and the
// partition is not cleaned) if a batch there cannot be decoded.
absl::StatusOr<CompactionPlan> PlanCompaction(
    const std::deque<StoredBatch>& batches, const CompactionOptions& options);

// Where a log's active segment starts: Kafka never cleans the segment being
// written. The broker keeps no segment files, so segments are counted as Kafka
// would roll them: a new one when the next batch would take the current one
// past `segment_bytes`, or when the batch's timestamp is more than
// `segment_ms` after the segment's first.
int64_t ActiveSegmentBase(const std::deque<StoredBatch>& batches,
                          int64_t log_end_offset, int64_t segment_bytes,
                          int64_t segment_ms);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_LOG_COMPACTION_H_
