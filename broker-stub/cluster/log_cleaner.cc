#include "cluster/log_cleaner.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cluster/broker_state.h"
#include "cluster/partition.h"
#include "cluster/topic.h"
#include "log/compaction.h"
#include "storage/keys.h"
#include "util/logging.h"

namespace exactly::broker {
namespace {

// The first offset the cleaner may not touch.
int64_t FirstUncleanableOffset(const Partition& partition,
                               const CompactionConfig& config, int64_t now) {
  const PartitionLog& log = partition.log();
  int64_t end =
      std::min(partition.last_stable_offset(),
               ActiveSegmentBase(log.batches(), log.log_end_offset(),
                                 config.segment_bytes, config.segment_ms));
  if (config.min_lag_ms > 0) {
    for (const StoredBatch& batch : log.batches()) {
      if (batch.base_offset() >= end) break;
      if (batch.header.max_timestamp > now - config.min_lag_ms) {
        end = batch.base_offset();
        break;
      }
    }
  }
  return end;
}

// Each active producer's last batch: a clean keeps it, emptied if need be, so
// that the producer's sequence and epoch survive (Kafka's
// lastRecordsOfActiveProducers).
std::unordered_set<int64_t> ProducerLastBatches(const Partition& partition) {
  std::unordered_set<int64_t> last;
  for (const auto& [producer_id, entry] : partition.producers().entries()) {
    if (!entry.batches.empty()) {
      const ProducerBatch& b = entry.batches.back();
      last.insert(b.first_offset + b.offset_delta);
    } else if (entry.last_marker_offset >= 0) {
      last.insert(entry.last_marker_offset);
    }
  }
  return last;
}

bool NeedsCleaning(const Partition& partition, const CompactionConfig& config,
                   int64_t end, int64_t now) {
  const CleanerCheckpoint& checkpoint = partition.cleaner();
  if (checkpoint.next_delete_horizon_ms &&
      now >= *checkpoint.next_delete_horizon_ms)
    return true;
  int64_t clean_bytes = 0, dirty_bytes = 0;
  int64_t oldest_dirty = INT64_MAX;
  for (const StoredBatch& batch : partition.log().batches()) {
    if (batch.next_offset() > end) break;
    if (batch.base_offset() < checkpoint.first_dirty_offset) {
      clean_bytes += static_cast<int64_t>(batch.size);
    } else {
      dirty_bytes += static_cast<int64_t>(batch.size);
      oldest_dirty = std::min(oldest_dirty, batch.header.max_timestamp);
    }
  }
  if (dirty_bytes == 0) return false;
  if (config.max_lag_ms < INT64_MAX && oldest_dirty < now - config.max_lag_ms)
    return true;
  return static_cast<double>(dirty_bytes) >=
         config.min_cleanable_ratio *
             static_cast<double>(clean_bytes + dirty_bytes);
}

// Cleans `partition` of a compacted topic with `config` if it needs it (see
// log_cleaner.h); returns whether it did.
bool CleanPartitionIfDirty(BrokerState& b, Partition& partition,
                           const CompactionConfig& config) {
  const int64_t now = b.NowMs();
  const int64_t end = FirstUncleanableOffset(partition, config, now);
  if (!NeedsCleaning(partition, config, end, now)) return false;

  CompactionOptions options;
  options.end_offset = end;
  options.now_ms = now;
  options.delete_retention_ms = config.delete_retention_ms;
  options.producer_last_batches = ProducerLastBatches(partition);
  PartitionLog& log = partition.log();
  absl::StatusOr<CompactionPlan> plan = PlanCompaction(log.batches(), options);
  CleanerCheckpoint& checkpoint = partition.cleaner();
  if (!plan.ok()) {
    // Kafka marks such a partition uncleanable; so does this, until restart.
    LogWarning(partition.topic(), "[", partition.index(),
               "]: not compacted: ", plan.status().message());
    checkpoint.first_dirty_offset = INT64_MAX;
    checkpoint.next_delete_horizon_ms.reset();
    return false;
  }
  checkpoint.first_dirty_offset = end;
  checkpoint.next_delete_horizon_ms = plan->next_delete_horizon_ms;
  if (plan->changes.empty()) return true;

  // The store gets the plan's batches at their base offsets (offsets never
  // move), before the log takes them over.
  Store* store = b.store();
  size_t removed = 0;
  for (const PartitionLog::BatchRewrite& change : plan->changes) {
    removed += change.bytes ? 0 : 1;
    if (store == nullptr) continue;
    const std::string key =
        keys::Batch(partition.topic_id(), partition.index(),
                    log.batches()[change.index].base_offset());
    if (change.bytes) {
      store->Put(key, *change.bytes);
    } else {
      store->Delete(key);
    }
  }
  // A restart takes the log start from the first stored batch unless told:
  // the clean removed that batch, not the offsets below the next one.
  const bool first_removed =
      plan->changes.front().index == 0 && !plan->changes.front().bytes;
  const size_t bytes_before = log.size_in_bytes();
  log.Rewrite(std::move(plan->changes));
  if (store != nullptr) {
    if (first_removed) b.PersistLogStart(partition);
    b.commits().CommitSoon();
  }
  LogDebug("compacted ", partition.topic(), "[", partition.index(), "] below ",
           end, ": ", plan->records_removed, " record(s) and ", removed,
           " batch(es) removed, ", bytes_before, " -> ", log.size_in_bytes(),
           " bytes");
  return true;
}

}  // namespace

LogCleaner::LogCleaner(BrokerState& b) : b_(b), timer_(b.io()) {}

void LogCleaner::Start() { Arm(); }

void LogCleaner::Arm() {
  timer_.expires_after(std::chrono::milliseconds(
      std::max(1, b_.options().log_cleaner_backoff_ms)));
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    CleanDirtyPartitions();
    Arm();
  });
}

int LogCleaner::CleanDirtyPartitions() {
  int cleaned = 0;
  for (const auto& [name, topic] : b_.topics().all()) {
    if (!topic->config.cleanup_compact()) continue;
    for (const auto& partition : topic->partitions) {
      cleaned +=
          CleanPartitionIfDirty(b_, *partition, topic->config.compaction()) ? 1
                                                                            : 0;
    }
  }
  return cleaned;
}

}  // namespace exactly::broker
