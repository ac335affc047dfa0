// One partition's replication state on this broker: whether it leads or
// follows, the leader epochs its log holds, and (leading) what its followers
// hold or (following) the high watermark its leader last reported. Without a
// controller a partition leads with no followers, and none of this changes
// what it does.
#ifndef EXACTLY_BROKER_REPLICATION_PARTITION_REPLICATION_H_
#define EXACTLY_BROKER_REPLICATION_PARTITION_REPLICATION_H_

#include <cstdint>

#include "replication/leader_epoch_cache.h"
#include "replication/replica_tracker.h"

namespace exactly::broker {

struct PartitionReplication {
  enum class Role { kLeader, kFollower };
  Role role = Role::kLeader;
  int32_t leader = -1;        // the node id this broker follows (or itself)
  int32_t leader_epoch = -1;  // -1 until the controller names one
  // More than one: the high watermark waits for the ISR.
  size_t replication_factor = 1;
  ReplicaTracker followers;  // leading: the followers' progress
  LeaderEpochCache epochs;
  // Following: the leader's high watermark as of the last fetch.
  int64_t leader_high_watermark = 0;
  // A follower's view of its leader's log start (DeleteRecords, retention):
  // it moves its own there once it holds and knows committed what is below.
  int64_t leader_log_start_offset = 0;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_PARTITION_REPLICATION_H_
