// Where a new partition's replicas go, by the rule of Kafka's ZooKeeper-era
// AdminUtils.assignReplicasToBrokersRackUnaware (brokers without racks):
// partition p's first replica, its preferred leader, is broker (start + p) % n,
// so leaders spread round the cluster; the other replicas follow it at a shift
// that grows by one every n partitions, so followers spread too. Kafka draws
// `start` and the first shift at random; here both come from the topic's name,
// so a test sees the same placement on every run and different topics still
// start on different brokers.
#ifndef EXACTLY_BROKER_CONTROLLER_REPLICA_PLACEMENT_H_
#define EXACTLY_BROKER_CONTROLLER_REPLICA_PLACEMENT_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "cluster/api_error.h"

namespace exactly::broker {

using ReplicaList = std::vector<int32_t>;

// Replicas for partitions [first_partition, first_partition + count) of
// `topic` over `brokers` (node ids, ascending). The caller has checked
// 1 <= replication_factor <= brokers.size().
std::vector<ReplicaList> PlaceReplicas(std::string_view topic,
                                       const std::vector<int32_t>& brokers,
                                       int32_t first_partition, int32_t count,
                                       int32_t replication_factor);

// The rule itself, with Kafka's two random draws given: the broker index of
// partition 0's first replica, and the follower shift at partition 0.
std::vector<ReplicaList> PlaceReplicasAt(const std::vector<int32_t>& brokers,
                                         int32_t first_partition, int32_t count,
                                         int32_t replication_factor,
                                         int32_t start, int32_t initial_shift);

// Kafka's checks on a replication factor asked for (-1: the default).
ApiError CheckReplicationFactor(int32_t replication_factor,
                                int32_t live_brokers);

// Kafka's checks on explicit assignments (CreateTopics' `assignments`,
// CreatePartitions' `assignments`): every partition names the same number of
// replicas, no broker twice, and only brokers that exist.
ApiError CheckAssignments(const std::vector<ReplicaList>& assignments,
                          const std::vector<int32_t>& brokers);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CONTROLLER_REPLICA_PLACEMENT_H_
