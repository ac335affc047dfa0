#include "cluster/cluster_membership.h"

#include <algorithm>

#include "util/logging.h"

namespace exactly::broker {

using protocol::ErrorCode;

void ApplyClusterMetadata(BrokerState& b,
                          std::shared_ptr<const ClusterMetadata> metadata) {
  const ClusterMetadata* applied = b.cluster_metadata();
  if (applied != nullptr && applied->version >= metadata->version) return;
  for (const auto& [name, placement] : metadata->topics) {
    const int32_t partitions =
        static_cast<int32_t>(placement->partitions.size());
    Topic* topic = b.topics().Find(name);
    if (topic == nullptr) {
      TopicConfig config;
      for (const auto& [key, value] : placement->configs) {
        // The creating broker checked them; one it cannot take is logged.
        if (absl::Status s = config.Set(key, value); !s.ok())
          LogWarning("topic ", name, ": config ", key, ": ", s.message());
      }
      topic = &b.AddTopic(name, partitions, std::move(config));
    } else if (topic->partition_count() < partitions) {
      b.topics().Grow(*topic, partitions);
      b.PersistTopic(*topic);
    }
    for (int32_t i = 0; i < partitions; ++i) {
      const PartitionState& p = placement->partitions[static_cast<size_t>(i)];
      topic->partition(i)->set_leader_epoch(std::max(p.leader_epoch, 0));
    }
  }
  b.set_cluster_metadata(std::move(metadata));
}

ErrorCode LeadershipError(const BrokerState& b, std::string_view topic,
                          int32_t partition) {
  const ClusterMetadata* m = b.cluster_metadata();
  if (b.controller() == nullptr || m == nullptr) return ErrorCode::kNone;
  const PartitionState* p = m->partition(topic, partition);
  if (p == nullptr) return ErrorCode::kNone;
  if (p->leader == b.options().node_id) return ErrorCode::kNone;
  if (p->leader == kNoLeader) return ErrorCode::kLeaderNotAvailable;
  return ErrorCode::kNotLeaderOrFollower;
}

}  // namespace exactly::broker
