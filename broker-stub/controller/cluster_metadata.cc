#include "controller/cluster_metadata.h"

#include <algorithm>

namespace exactly::broker {

bool PartitionState::IsReplica(int32_t node) const {
  return std::find(replicas.begin(), replicas.end(), node) != replicas.end();
}

bool PartitionState::InIsr(int32_t node) const {
  return std::find(isr.begin(), isr.end(), node) != isr.end();
}

const BrokerInfo* ClusterMetadata::broker(int32_t node_id) const {
  auto it = brokers.find(node_id);
  return it == brokers.end() ? nullptr : &it->second;
}

const TopicPlacement* ClusterMetadata::topic(std::string_view name) const {
  auto it = topics.find(name);
  return it == topics.end() ? nullptr : it->second.get();
}

const PartitionState* ClusterMetadata::partition(std::string_view topic_name,
                                                 int32_t index) const {
  const TopicPlacement* t = topic(topic_name);
  if (t == nullptr || index < 0 ||
      index >= static_cast<int32_t>(t->partitions.size()))
    return nullptr;
  return &t->partitions[static_cast<size_t>(index)];
}

std::vector<int32_t> ClusterMetadata::LiveBrokers() const {
  std::vector<int32_t> live;
  for (const auto& [id, info] : brokers)
    if (!info.fenced) live.push_back(id);
  return live;
}

}  // namespace exactly::broker
