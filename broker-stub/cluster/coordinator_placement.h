// Which broker of a cluster coordinates a consumer group or a transactional
// id. Kafka hashes the key to a partition of __consumer_offsets or
// __transaction_state (50 partitions each) and the leader of that partition
// coordinates it. Those internal topics are not replicated here yet (issue
// 20), so the partition maps to a broker by a fixed rule instead: every
// registered broker by node id, the partition modulo their count. The answer
// is the same on every broker and does not move when a broker dies (its keys
// then have no coordinator until it returns: no failover yet).
//
// A broker without a controller coordinates every key.
#ifndef EXACTLY_BROKER_CLUSTER_COORDINATOR_PLACEMENT_H_
#define EXACTLY_BROKER_CLUSTER_COORDINATOR_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "cluster/broker_state.h"
#include "controller/cluster_metadata.h"
#include "protocol/error_code.h"

namespace exactly::broker {

// Kafka's offsets.topic.num.partitions and
// transaction.state.log.num.partitions defaults.
inline constexpr int32_t kCoordinatorPartitions = 50;
// The topic name a transaction marker for a group's offsets carries, as Kafka
// writes that marker to the group's __consumer_offsets partition.
inline constexpr std::string_view kConsumerOffsetsTopic = "__consumer_offsets";

// Kafka's partitionFor: Utils.abs(key.hashCode()) % 50, with Java's
// String.hashCode over the key's bytes (the same as Kafka's for ASCII keys).
int32_t CoordinatorPartition(std::string_view key);

// The broker that coordinates the keys of `partition`; null when no broker
// is registered.
const BrokerInfo* CoordinatorBrokerOf(const ClusterMetadata& m,
                                      int32_t partition);

// The node id coordinating `key`, with its host and port.
struct CoordinatorAddress {
  int32_t node_id = -1;
  std::string host;
  int32_t port = -1;
  bool fenced = false;  // the broker is down: no coordinator for now
};
CoordinatorAddress FindCoordinatorOf(const BrokerState& b,
                                     std::string_view key);

// kNone when this broker coordinates `key`, NOT_COORDINATOR otherwise.
protocol::ErrorCode CoordinatorError(const BrokerState& b,
                                     std::string_view key);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_COORDINATOR_PLACEMENT_H_
