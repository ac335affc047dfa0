// What the controller decides and every broker follows: which brokers exist
// and live, where each partition's replicas are, which one leads, with which
// leader epoch, and which are in sync. Plain values; the controller publishes
// them as immutable snapshots (version ascending), so a broker's thread reads
// one without a lock and never sees half a change.
#ifndef EXACTLY_BROKER_CONTROLLER_CLUSTER_METADATA_H_
#define EXACTLY_BROKER_CONTROLLER_CLUSTER_METADATA_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "controller/replica_placement.h"

namespace exactly::broker {

struct BrokerInfo {
  int32_t node_id = 0;
  std::string host;
  int32_t port = 0;
  // A stopped, killed or isolated broker is fenced: it leads nothing and is
  // in no ISR until it registers again (KRaft's fencing).
  bool fenced = false;
  // Its listeners' ports by listener name (PLAINTEXT's is `port`).
  std::map<std::string, int32_t, std::less<>> listener_ports;
  bool operator==(const BrokerInfo&) const = default;

  // The port a client of `listener` is told; `port` for an unknown one.
  int32_t PortFor(std::string_view listener) const {
    auto it = listener_ports.find(listener);
    return it == listener_ports.end() ? port : it->second;
  }
};

inline constexpr int32_t kNoLeader = -1;

struct PartitionState {
  ReplicaList replicas;  // the first one is the preferred leader
  int32_t leader = kNoLeader;
  // Grows with every leader change (the first leader has epoch 0); a request
  // or a batch that carries an older one comes from a deposed leader's view of
  // the world.
  int32_t leader_epoch = -1;
  // Grows with every change of this partition (leader or ISR), so an ISR
  // change computed from a stale view is refused (KIP-497's partition epoch).
  int32_t partition_epoch = -1;
  ReplicaList isr;

  bool IsReplica(int32_t node) const;
  bool InIsr(int32_t node) const;
};

struct TopicPlacement {
  std::string name;
  // unclean.leader.election.enable: whether an out-of-sync replica may lead
  // when no in-sync one is alive.
  bool unclean_leader_election = false;
  // The topic's config overrides, so that every broker holds the topic with
  // the same configs.
  std::map<std::string, std::string> configs;
  std::vector<PartitionState> partitions;
};

struct ClusterMetadata {
  int64_t version = 0;
  std::map<int32_t, BrokerInfo> brokers;
  std::map<std::string, std::shared_ptr<const TopicPlacement>, std::less<>>
      topics;
  // Dynamic broker configs by BROKER resource name: "" the cluster-wide
  // default, "<node id>" one broker's own (cluster/dynamic_broker_config.h).
  std::map<std::string, std::map<std::string, std::string>> broker_configs;

  const BrokerInfo* broker(int32_t node_id) const;
  const TopicPlacement* topic(std::string_view name) const;
  const PartitionState* partition(std::string_view topic,
                                  int32_t partition) const;
  // Node ids of the brokers that are not fenced, ascending.
  std::vector<int32_t> LiveBrokers() const;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CONTROLLER_CLUSTER_METADATA_H_
