#include "replication/replica_tracker.h"

#include <algorithm>

namespace exactly::broker {

void ReplicaTracker::BecomeLeader(int32_t self, const ReplicaList& replicas,
                                  const ReplicaList& isr, int64_t now_ms) {
  self_ = self;
  isr_ = isr;
  followers_.clear();
  for (int32_t id : replicas) {
    if (id == self) continue;
    Follower& f = followers_[id];
    if (InIsr(id)) f.last_caught_up_ms = now_ms;
  }
}

bool ReplicaTracker::InIsr(int32_t id) const {
  return std::find(isr_.begin(), isr_.end(), id) != isr_.end();
}

bool ReplicaTracker::OnFollowerFetch(int32_t id, int64_t fetch_offset,
                                     int64_t now_ms, int64_t leader_end) {
  auto it = followers_.find(id);
  if (it == followers_.end()) return false;
  Follower& f = it->second;
  if (fetch_offset >= leader_end) {
    f.last_caught_up_ms = std::max(f.last_caught_up_ms, now_ms);
  } else if (f.leader_end_at_last_fetch >= 0 &&
             fetch_offset >= f.leader_end_at_last_fetch) {
    // It now holds what the log held when it last asked: it was caught up
    // at that time.
    f.last_caught_up_ms = std::max(f.last_caught_up_ms, f.last_fetch_ms);
  }
  f.log_end_offset = fetch_offset;
  f.last_fetch_ms = now_ms;
  f.leader_end_at_last_fetch = leader_end;
  return true;
}

int64_t ReplicaTracker::HighWatermark(int64_t leader_end) const {
  int64_t hw = leader_end;
  for (int32_t id : isr_) {
    if (id == self_) continue;
    auto it = followers_.find(id);
    // An in-sync follower that has not fetched yet holds nothing known.
    const int64_t end = it == followers_.end() ? 0 : it->second.log_end_offset;
    hw = std::min(hw, std::max<int64_t>(end, 0));
  }
  return hw;
}

ReplicaList ReplicaTracker::LaggingFollowers(int64_t now_ms, int64_t leader_end,
                                             int64_t lag_max_ms) const {
  ReplicaList lagging;
  for (int32_t id : isr_) {
    if (id == self_) continue;
    auto it = followers_.find(id);
    if (it == followers_.end()) continue;
    const Follower& f = it->second;
    const bool caught_up = f.log_end_offset >= leader_end ||
                           now_ms - f.last_caught_up_ms <= lag_max_ms;
    if (!caught_up) lagging.push_back(id);
  }
  return lagging;
}

ReplicaList ReplicaTracker::CaughtUpFollowers(int64_t high_watermark,
                                              int64_t epoch_start) const {
  ReplicaList ready;
  for (const auto& [id, f] : followers_) {
    if (InIsr(id) || f.log_end_offset < 0) continue;
    if (f.log_end_offset >= high_watermark && f.log_end_offset >= epoch_start)
      ready.push_back(id);
  }
  return ready;
}

int64_t ReplicaTracker::log_end_offset(int32_t id) const {
  auto it = followers_.find(id);
  return it == followers_.end() ? -1 : it->second.log_end_offset;
}

}  // namespace exactly::broker
