#include "metrics/partition_sampler.h"

#include <algorithm>

#include "cluster/broker_state.h"
#include "controller/cluster_metadata.h"

namespace exactly::broker {

std::vector<PartitionSample> SamplePartitions(BrokerState& state) {
  std::vector<PartitionSample> out;
  const ClusterMetadata* metadata = state.cluster_metadata();
  const int32_t self = state.options().node_id;
  for (const auto& [name, topic] : state.topics().all()) {
    for (const auto& p : topic->partitions) {
      PartitionSample s;
      if (metadata != nullptr) {
        // A cluster's brokers know every topic but host only their replicas.
        const PartitionState* placed = metadata->partition(name, p->index());
        if (placed == nullptr ||
            std::find(placed->replicas.begin(), placed->replicas.end(), self) ==
                placed->replicas.end())
          continue;
        s.leader = placed->leader == self;
        if (*s.leader) s.isr_size = static_cast<int32_t>(placed->isr.size());
      }
      s.topic = name;
      s.partition = p->index();
      s.log_start_offset = p->log().log_start_offset();
      s.log_end_offset = p->log().log_end_offset();
      s.high_watermark = p->log().high_watermark();
      s.last_stable_offset = p->last_stable_offset();
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace exactly::broker
