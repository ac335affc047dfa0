// A leader's view of its followers, for one partition (the follower state of
// Kafka's Partition and Replica): how far each follower's log reaches, when it
// was last caught up, and what follows from that: the high watermark (what
// every in-sync replica holds), which in-sync followers lag too long to stay
// (ISR shrink) and which out-of-sync ones may rejoin (ISR expand).
//
// Pure bookkeeping, on the partition leader's thread: the caller feeds it
// follower fetches and the clock, and acts on its answers (moves the high
// watermark, asks the controller to change the ISR).
#ifndef EXACTLY_BROKER_REPLICATION_REPLICA_TRACKER_H_
#define EXACTLY_BROKER_REPLICATION_REPLICA_TRACKER_H_

#include <cstdint>
#include <map>

#include "controller/replica_placement.h"

namespace exactly::broker {

class ReplicaTracker {
 public:
  // This broker (`self`) leads from now on; its log ends at `leader_end`. What
  // the followers hold is unknown until they fetch; in-sync ones count as
  // caught up now, so none is dropped before it had a chance to fetch.
  void BecomeLeader(int32_t self, const ReplicaList& replicas,
                    const ReplicaList& isr, int64_t now_ms);
  // The ISR changed (an AlterPartition of ours, or the controller's doing).
  void SetIsr(const ReplicaList& isr) { isr_ = isr; }
  const ReplicaList& isr() const { return isr_; }

  // Follower `id` asked for records from `fetch_offset` (so it holds all
  // before it) at `now_ms`, when the leader's log ended at `leader_end`. A
  // fetch from the log end means caught up now; one from at least where the
  // log ended at its previous fetch means it was caught up then. Returns
  // false for a broker that is no replica of the partition.
  bool OnFollowerFetch(int32_t id, int64_t fetch_offset, int64_t now_ms,
                       int64_t leader_end);

  // The high watermark the ISR allows: the least log end among the in-sync
  // replicas, the leader's own (`leader_end`) included; an in-sync follower
  // that has not fetched yet counts as holding nothing. The caller never moves
  // the high watermark down, so a new leader's stays where it was until every
  // in-sync follower has fetched.
  int64_t HighWatermark(int64_t leader_end) const;

  // In-sync followers not caught up within `lag_max_ms`
  // (replica.lag.time.max.ms): the ISR should lose them.
  ReplicaList LaggingFollowers(int64_t now_ms, int64_t leader_end,
                               int64_t lag_max_ms) const;
  // Out-of-sync followers that hold everything up to the high watermark and
  // to the start of the leader's current epoch (`epoch_start`): the ISR may
  // take them back.
  ReplicaList CaughtUpFollowers(int64_t high_watermark,
                                int64_t epoch_start) const;

  // -1 while unknown.
  int64_t log_end_offset(int32_t id) const;

 private:
  struct Follower {
    int64_t log_end_offset = -1;
    int64_t last_caught_up_ms = -1;
    int64_t last_fetch_ms = -1;
    int64_t leader_end_at_last_fetch = -1;
  };
  bool InIsr(int32_t id) const;

  int32_t self_ = -1;
  ReplicaList isr_;
  std::map<int32_t, Follower> followers_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_REPLICA_TRACKER_H_
