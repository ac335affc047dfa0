// The coordinators' logs: __transaction_state and __consumer_offsets, whose
// partitions' leaders coordinate the transactional ids and groups that hash
// to them. Both coordinators write their state the same way, as Kafka's
// coordinators do: this broker's own batch appended to a partition it leads,
// acknowledged once every in-sync replica holds it (acks=all). And both move
// with the leaderships of their topic's partitions (LeadershipChanges).
#ifndef EXACTLY_BROKER_CLUSTER_COORDINATOR_LOG_H_
#define EXACTLY_BROKER_CLUSTER_COORDINATOR_LOG_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "cluster/broker_state.h"
#include "controller/cluster_metadata.h"
#include "protocol/error_code.h"

namespace exactly::broker {

// Appends `batch` (a record batch the coordinator built, transactional or
// not) to `topic`-`index`, then runs `done(kNone)` once the high watermark
// passes it. Otherwise `done` gets the cause: NOT_LEADER_OR_FOLLOWER (this
// broker does not lead the partition, or stopped leading it),
// NOT_ENOUGH_REPLICAS (too few in sync, checked before appending),
// KAFKA_STORAGE_ERROR, or what the replication wait ended with
// (REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND...).
void AppendToCoordinatorLog(BrokerState& b, std::string_view topic,
                            int32_t index, std::string batch,
                            absl::AnyInvocable<void(protocol::ErrorCode)> done);

// A coordinator's answer to a client when its state write failed with
// `cause`, as Kafka maps it: NOT_COORDINATOR when the leadership moved (the
// client looks the coordinator up again), COORDINATOR_NOT_AVAILABLE when the
// partition cannot take writes for now.
protocol::ErrorCode CoordinatorWriteError(protocol::ErrorCode cause);

// What changes in the partitions of `topic` this broker coordinates, given
// `loaded` (partition -> the leader epoch it was loaded at) and the newest
// metadata: the partitions to unload (no longer led, or led at a new epoch)
// and the ones to load, with their epochs. A broker cut off from the cluster
// (Faults::isolated) leads none.
struct LeadershipChanges {
  std::vector<int32_t> unload;
  std::vector<std::pair<int32_t, int32_t>> load;  // partition, leader epoch
};
LeadershipChanges ChangedLeaderships(BrokerState& b, const ClusterMetadata& m,
                                     std::string_view topic,
                                     const std::map<int32_t, int32_t>& loaded);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_COORDINATOR_LOG_H_
