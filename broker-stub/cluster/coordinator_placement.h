// Which broker of a cluster coordinates a consumer group or a transactional
// id. Kafka hashes the key to a partition of __consumer_offsets or
// __transaction_state (50 partitions each) and the leader of that partition
// coordinates it.
//
// As in Kafka, for both: the topic is created through the controller the
// first time a client looks for such a coordinator (EnsureCoordinatorTopic),
// its partition's leader coordinates, and the coordinator moves with the
// leadership (txn/transaction_coordinator.h, group/group_coordinator.h).
//
// A broker without a controller coordinates every key.
#ifndef EXACTLY_BROKER_CLUSTER_COORDINATOR_PLACEMENT_H_
#define EXACTLY_BROKER_CLUSTER_COORDINATOR_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "cluster/api_error.h"
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

// Kafka's internal topics: the coordinators' logs. Clients may read them but
// not produce to them.
bool IsInternalTopic(std::string_view topic);

// Kafka's partitionFor: Utils.abs(key.hashCode()) % 50, with Java's
// String.hashCode over the key's bytes (the same as Kafka's for ASCII keys).
// `partitions` is the topic's partition count (Kafka's
// transaction.state.log.num.partitions / offsets.topic.num.partitions).
int32_t CoordinatorPartition(std::string_view key,
                             int32_t partitions = kCoordinatorPartitions);

enum class CoordinatorKind { kGroup, kTransaction };

// The coordinators' log topics: __consumer_offsets and __transaction_state.
std::string_view CoordinatorTopic(CoordinatorKind kind);

// The node id coordinating `key`, with its host and port.
struct CoordinatorAddress {
  int32_t node_id = -1;
  std::string host;
  int32_t port = -1;
  bool fenced = false;  // the broker is down: no coordinator for now
};
// `listener` picks which of the coordinator's ports is named (the listener the
// asking client came through); "" names its PLAINTEXT one.
CoordinatorAddress FindCoordinatorOf(const BrokerState& b, CoordinatorKind kind,
                                     std::string_view key,
                                     std::string_view listener = "");

// kNone when this broker coordinates `key`; when this broker was just named
// the leader of its partition and has not taken it up yet,
// COORDINATOR_LOAD_IN_PROGRESS; NOT_COORDINATOR otherwise.
protocol::ErrorCode CoordinatorError(const BrokerState& b, CoordinatorKind kind,
                                     std::string_view key);

// In a cluster: creates the coordinator's topic when the controller does not
// have it yet, with Kafka's layout (50 partitions, compacted), replication
// factor min(3, brokers) and min.insync.replicas min(2, that): Kafka's
// offsets.topic.* and transaction.state.log.* defaults capped at the
// cluster's size.
ApiError EnsureCoordinatorTopic(BrokerState& b, CoordinatorKind kind);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_COORDINATOR_PLACEMENT_H_
