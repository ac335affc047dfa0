#include "replication/leader_epoch_cache.h"

#include <algorithm>

namespace exactly::broker {

void LeaderEpochCache::Assign(int32_t epoch, int64_t start_offset) {
  if (epoch < 0 || start_offset < 0) return;
  if (!entries_.empty() && entries_.back().epoch == epoch &&
      entries_.back().start_offset <= start_offset)
    return;  // already known: it started there or earlier
  // Entries the new one contradicts (a later or equal epoch, or one that
  // starts no earlier) wrote nothing that survives: both columns stay
  // ascending.
  while (!entries_.empty() && (entries_.back().epoch >= epoch ||
                               entries_.back().start_offset >= start_offset))
    entries_.pop_back();
  entries_.push_back({epoch, start_offset});
}

EpochEndOffset LeaderEpochCache::EndOffsetFor(int32_t epoch,
                                              int64_t log_end_offset) const {
  if (epoch == kUndefinedEpoch || entries_.empty()) return {};
  if (entries_.back().epoch == epoch) return {epoch, log_end_offset};
  // The first entry of a later epoch.
  auto higher = std::upper_bound(
      entries_.begin(), entries_.end(), epoch,
      [](int32_t e, const EpochEntry& entry) { return e < entry.epoch; });
  if (higher == entries_.end()) return {};
  if (higher == entries_.begin()) return {epoch, higher->start_offset};
  return {std::prev(higher)->epoch, higher->start_offset};
}

void LeaderEpochCache::TruncateFromEnd(int64_t end_offset) {
  while (!entries_.empty() && entries_.back().start_offset >= end_offset)
    entries_.pop_back();
}

void LeaderEpochCache::TruncateFromStart(int64_t start_offset) {
  // The last entry that starts at or before the new start covers it.
  size_t keep_from = 0;
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].start_offset <= start_offset) keep_from = i;
  if (entries_.empty() || entries_.front().start_offset > start_offset) return;
  entries_.erase(entries_.begin(),
                 entries_.begin() + static_cast<std::ptrdiff_t>(keep_from));
  entries_.front().start_offset = start_offset;
}

std::optional<EpochEntry> LeaderEpochCache::latest() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.back();
}

}  // namespace exactly::broker
