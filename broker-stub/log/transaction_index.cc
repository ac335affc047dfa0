#include "log/transaction_index.h"

#include <algorithm>

namespace exactly::broker {

void TransactionIndex::OnTransactionalBatch(int64_t producer_id,
                                            int64_t base_offset) {
  if (open_.emplace(producer_id, base_offset).second) {
    open_first_offsets_.insert(base_offset);
  }
}

void TransactionIndex::OnMarker(int64_t producer_id, bool commit,
                                int64_t marker_offset) {
  auto it = open_.find(producer_id);
  if (it == open_.end())
    return;  // a marker for a partition the producer never wrote to
  int64_t first = it->second;
  open_first_offsets_.erase(open_first_offsets_.find(first));
  open_.erase(it);
  if (!commit) aborted_.push_back({producer_id, first, marker_offset});
}

std::optional<int64_t> TransactionIndex::FirstUnstableOffset() const {
  if (open_first_offsets_.empty()) return std::nullopt;
  return *open_first_offsets_.begin();
}

std::vector<AbortedTxn> TransactionIndex::CollectAborted(int64_t from,
                                                         int64_t to) const {
  std::vector<AbortedTxn> out;
  auto it = std::partition_point(
      aborted_.begin(), aborted_.end(),
      [&](const AbortedTxn& a) { return a.last_offset < from; });
  for (; it != aborted_.end(); ++it) {
    if (it->first_offset < to) out.push_back(*it);
  }
  return out;
}

void TransactionIndex::DeleteBefore(int64_t log_start_offset) {
  auto it = std::partition_point(
      aborted_.begin(), aborted_.end(),
      [&](const AbortedTxn& a) { return a.last_offset < log_start_offset; });
  aborted_.erase(aborted_.begin(), it);
}

}  // namespace exactly::broker
