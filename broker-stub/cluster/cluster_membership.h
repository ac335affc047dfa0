// How a broker of a cluster follows the controller: it applies each metadata
// snapshot (adds the topics it has not seen, grows partitions, takes up each
// partition's leader epoch), and it serves a partition's reads and writes
// only while it leads it. A broker without a controller is the whole cluster
// and leads everything.
#ifndef EXACTLY_BROKER_CLUSTER_CLUSTER_MEMBERSHIP_H_
#define EXACTLY_BROKER_CLUSTER_CLUSTER_MEMBERSHIP_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "cluster/broker_state.h"
#include "controller/cluster_metadata.h"
#include "protocol/error_code.h"

namespace exactly::broker {

// Applies `metadata` unless this broker has applied a later one. Runs on the
// broker's thread.
void ApplyClusterMetadata(BrokerState& b,
                          std::shared_ptr<const ClusterMetadata> metadata);

// kNone when this broker leads `topic`[`partition`] (or has no controller);
// NOT_LEADER_OR_FOLLOWER when another broker does, LEADER_NOT_AVAILABLE when
// none does (an offline partition), UNKNOWN_TOPIC_OR_PARTITION when the
// controller does not know it (a stray this broker kept from before).
protocol::ErrorCode LeadershipError(const BrokerState& b,
                                    std::string_view topic, int32_t partition);

// LeadershipError, then the asker's view of the leader epoch (KIP-320): an
// older `current_leader_epoch` than this leader's is FENCED_LEADER_EPOCH, a
// newer one UNKNOWN_LEADER_EPOCH (this broker has not applied the
// controller's decision yet); -1 asks for no check.
protocol::ErrorCode LeaderEpochError(const BrokerState& b,
                                     std::string_view topic,
                                     const Partition& partition,
                                     int32_t current_leader_epoch);

// Stops every replica fetch loop of this broker and closes their connections
// to the leaders (an isolated broker). Runs on the broker's thread.
void StopFollowing(BrokerState& b);

// Stops every replica fetch loop, dropping the fetches in flight with their
// connections, and starts them again as the controller last said: a fault
// that holds fetches back (a replication pause) holds from now on, not from
// the next fetch. Runs on the broker's thread.
void RestartFollowing(BrokerState& b);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_CLUSTER_MEMBERSHIP_H_
