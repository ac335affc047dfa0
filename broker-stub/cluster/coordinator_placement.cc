#include "cluster/coordinator_placement.h"

#include <climits>
#include <iterator>
#include <memory>

#include "controller/controller.h"

namespace exactly::broker {

int32_t CoordinatorPartition(std::string_view key) {
  uint32_t hash = 0;  // Java int arithmetic wraps; unsigned does the same
  for (unsigned char c : key) hash = 31 * hash + c;
  const int32_t h = static_cast<int32_t>(hash);
  const int32_t abs = h == INT32_MIN ? 0 : (h < 0 ? -h : h);
  return abs % kCoordinatorPartitions;
}

const BrokerInfo* CoordinatorBrokerOf(const ClusterMetadata& m,
                                      int32_t partition) {
  if (m.brokers.empty()) return nullptr;
  // Every registered broker, fenced or not, so that the choice is stable.
  auto it = m.brokers.begin();
  std::advance(it, partition % static_cast<int32_t>(m.brokers.size()));
  return &it->second;
}

CoordinatorAddress FindCoordinatorOf(const BrokerState& b,
                                     std::string_view key) {
  if (b.controller() == nullptr) {
    return {b.options().node_id, b.advertised_host(), b.advertised_port()};
  }
  // The controller's newest snapshot, not the one this broker applied last:
  // every broker must answer alike as soon as the cluster is up.
  const std::shared_ptr<const ClusterMetadata> m = b.controller()->metadata();
  const BrokerInfo* info = CoordinatorBrokerOf(*m, CoordinatorPartition(key));
  if (info == nullptr) return {.fenced = true};
  return {info->node_id, info->host, info->port, info->fenced};
}

protocol::ErrorCode CoordinatorError(const BrokerState& b,
                                     std::string_view key) {
  if (b.controller() == nullptr) return protocol::ErrorCode::kNone;
  return FindCoordinatorOf(b, key).node_id == b.options().node_id
             ? protocol::ErrorCode::kNone
             : protocol::ErrorCode::kNotCoordinator;
}

}  // namespace exactly::broker
