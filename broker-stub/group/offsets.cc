#include "group/offsets.h"

namespace exactly::broker {

const OffsetAndMetadata* GroupOffsets::Find(const TopicPartition& tp) const {
  auto it = committed_.find(tp);
  return it == committed_.end() ? nullptr : &it->second;
}

bool GroupOffsets::Apply(const TopicPartition& tp,
                         const OffsetAndMetadata& offset) {
  auto it = committed_.find(tp);
  if (it != committed_.end() && it->second.record_seq > offset.record_seq) {
    return false;
  }
  committed_[tp] = offset;
  return true;
}

void GroupOffsets::EndCommit(const TopicPartition& tp) {
  auto it = in_flight_.find(tp);
  if (it != in_flight_.end() && --it->second <= 0) in_flight_.erase(it);
}

void GroupOffsets::StageTxn(int64_t producer_id, int16_t producer_epoch,
                            const TopicPartition& tp,
                            const OffsetAndMetadata& offset) {
  PendingTxn& txn = pending_txns_[producer_id];
  txn.producer_epoch = producer_epoch;
  txn.offsets[tp] = offset;
}

std::vector<std::pair<TopicPartition, OffsetAndMetadata>>
GroupOffsets::CompleteTxn(int64_t producer_id, bool commit) {
  std::vector<std::pair<TopicPartition, OffsetAndMetadata>> applied;
  auto it = pending_txns_.find(producer_id);
  if (it == pending_txns_.end()) return applied;
  PendingTxn txn = std::move(it->second);
  pending_txns_.erase(it);
  if (!commit) return applied;
  for (auto& [tp, offset] : txn.offsets) {
    if (Apply(tp, offset)) applied.emplace_back(tp, offset);
  }
  return applied;
}

bool GroupOffsets::HasPendingTxn(const TopicPartition& tp) const {
  for (const auto& [pid, txn] : pending_txns_) {
    if (txn.offsets.contains(tp)) return true;
  }
  return false;
}

GroupOffsets::Removed GroupOffsets::RemoveTopic(const std::string& topic) {
  Removed removed;
  for (auto it = committed_.begin(); it != committed_.end();) {
    if (it->first.first == topic) {
      removed.committed.push_back(it->first);
      it = committed_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto txn = pending_txns_.begin(); txn != pending_txns_.end();) {
    auto& offsets = txn->second.offsets;
    for (auto it = offsets.begin(); it != offsets.end();) {
      if (it->first.first == topic) {
        removed.pending.emplace_back(txn->first, it->first);
        it = offsets.erase(it);
      } else {
        ++it;
      }
    }
    txn = offsets.empty() ? pending_txns_.erase(txn) : std::next(txn);
  }
  return removed;
}

void GroupOffsets::RestoreTxn(int64_t producer_id,
                              std::optional<PendingTxn> before) {
  if (before.has_value()) {
    pending_txns_[producer_id] = *std::move(before);
  } else {
    pending_txns_.erase(producer_id);
  }
}

}  // namespace exactly::broker
