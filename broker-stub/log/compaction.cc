#include "log/compaction.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace exactly::broker {
namespace {

using protocol::ControlType;
using protocol::Record;
using protocol::RecordBatchView;

RecordBatchView View(const StoredBatch& b) { return {b.header, b.bytes()}; }

// How each transactional data batch's transaction ended: the type of the
// producer's next marker after it (nullopt: none yet, or one already emptied
// by an earlier clean).
std::vector<std::optional<ControlType>> TransactionOutcomes(
    const std::deque<StoredBatch>& batches, size_t end) {
  std::vector<std::optional<ControlType>> outcome(end);
  std::unordered_map<int64_t, std::optional<ControlType>> next_marker;
  for (size_t i = batches.size(); i-- > 0;) {
    const protocol::RecordBatchHeader& h = batches[i].header;
    if (!h.is_transactional()) continue;
    if (h.is_control()) {
      absl::StatusOr<ControlType> type =
          protocol::ReadControlType(View(batches[i]));
      next_marker[h.producer_id] =
          type.ok() ? std::optional<ControlType>(*type) : std::nullopt;
    } else if (i < end) {
      auto it = next_marker.find(h.producer_id);
      if (it != next_marker.end()) outcome[i] = it->second;
    }
  }
  return outcome;
}

}  // namespace

absl::StatusOr<CompactionPlan> PlanCompaction(
    const std::deque<StoredBatch>& batches, const CompactionOptions& options) {
  CompactionPlan plan;
  size_t end = 0;
  while (end < batches.size() &&
         batches[end].next_offset() <= options.end_offset)
    ++end;
  if (end == 0) return plan;
  const std::vector<std::optional<ControlType>> outcome =
      TransactionOutcomes(batches, end);
  auto aborted = [&](size_t i) {
    return batches[i].header.is_transactional() &&
           !batches[i].header.is_control() && outcome[i] == ControlType::kAbort;
  };

  // Decode once; the offset map: each key's latest offset in the range.
  std::vector<std::vector<Record>> records(end);
  std::unordered_map<std::string, int64_t> latest;
  for (size_t i = 0; i < end; ++i) {
    absl::StatusOr<std::vector<Record>> decoded =
        protocol::DecodeRecords(View(batches[i]));
    if (!decoded.ok()) {
      return absl::DataLossError(
          absl::StrCat("batch at offset ", batches[i].base_offset(),
                       " cannot be read: ", decoded.status().message()));
    }
    records[i] = std::move(*decoded);
    if (batches[i].header.is_control() || aborted(i)) continue;
    for (const Record& r : records[i]) {
      if (r.key) latest[*r.key] = std::max(latest[*r.key], r.offset);
    }
  }

  const int64_t now = options.now_ms;
  const int64_t new_horizon = now + options.delete_retention_ms;
  auto note_pending_horizon = [&](int64_t horizon) {
    if (!plan.next_delete_horizon_ms || horizon < *plan.next_delete_horizon_ms)
      plan.next_delete_horizon_ms = horizon;
  };
  // Producers with a batch of their current transaction seen in this clean:
  // its marker must stay.
  std::unordered_set<int64_t> transaction_seen;
  for (size_t i = 0; i < end; ++i) {
    const StoredBatch& batch = batches[i];
    const protocol::RecordBatchHeader& h = batch.header;
    const bool keep_empty =
        (h.has_producer_id() &&
         options.producer_last_batches.contains(h.last_offset())) ||
        i + 1 == end;
    const bool horizon_passed =
        h.has_delete_horizon() && now >= h.delete_horizon_ms();
    std::vector<Record>& in = records[i];
    std::vector<Record> kept;
    std::optional<int64_t> stamp;  // a delete horizon to set
    if (h.is_control()) {
      const bool transaction_gone = !transaction_seen.erase(h.producer_id);
      if (in.empty() || (transaction_gone && horizon_passed)) {
        // Removed, or emptied when it must stay.
      } else {
        kept = std::move(in);
        if (transaction_gone) {
          if (!h.has_delete_horizon()) stamp = new_horizon;
          note_pending_horizon(stamp.value_or(h.delete_horizon_ms()));
        }
      }
    } else {
      if (h.is_transactional()) transaction_seen.insert(h.producer_id);
      if (!aborted(i)) {
        bool tombstone_kept = false;
        for (Record& r : in) {
          if (!r.key) continue;  // cannot be compacted: Kafka drops it
          if (r.offset < latest[*r.key]) continue;
          if (!r.value) {
            if (horizon_passed) continue;
            tombstone_kept = true;
          }
          kept.push_back(std::move(r));
        }
        if (tombstone_kept) {
          if (!h.has_delete_horizon()) stamp = new_horizon;
          note_pending_horizon(stamp.value_or(h.delete_horizon_ms()));
        }
      }
    }
    const size_t count = static_cast<size_t>(std::max(0, h.record_count));
    plan.records_removed += static_cast<int64_t>(count - kept.size());
    if (kept.empty() && !keep_empty) {
      plan.changes.push_back({i, std::nullopt});
      continue;
    }
    if (kept.size() == count && !stamp) continue;  // unchanged
    absl::StatusOr<std::string> rebuilt =
        protocol::BuildRetainedBatch(h, kept, stamp);
    if (!rebuilt.ok()) return rebuilt.status();
    plan.changes.push_back({i, std::move(*rebuilt)});
  }
  return plan;
}

int64_t ActiveSegmentBase(const std::deque<StoredBatch>& batches,
                          int64_t log_end_offset, int64_t segment_bytes,
                          int64_t segment_ms) {
  int64_t base = log_end_offset;
  int64_t bytes = 0;
  int64_t first_timestamp = 0;
  for (const StoredBatch& b : batches) {
    const bool roll = bytes == 0 ||
                      bytes + static_cast<int64_t>(b.size) > segment_bytes ||
                      b.header.max_timestamp - first_timestamp > segment_ms;
    if (roll) {
      base = b.base_offset();
      bytes = 0;
      first_timestamp = b.header.max_timestamp;
    }
    bytes += static_cast<int64_t>(b.size);
  }
  return base;
}

}  // namespace exactly::broker
