#include "cluster/coordinator_placement.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <memory>

#include "absl/strings/str_cat.h"
#include "controller/controller.h"
#include "txn/transaction_coordinator.h"
#include "txn/transaction_log.h"
#include "util/logging.h"

namespace exactly::broker {

bool IsInternalTopic(std::string_view topic) {
  return topic == kConsumerOffsetsTopic || topic == kTransactionStateTopic;
}

int32_t CoordinatorPartition(std::string_view key, int32_t partitions) {
  uint32_t hash = 0;  // Java int arithmetic wraps; unsigned does the same
  for (unsigned char c : key) hash = 31 * hash + c;
  const int32_t h = static_cast<int32_t>(hash);
  const int32_t abs = h == INT32_MIN ? 0 : (h < 0 ? -h : h);
  return abs % partitions;
}

const BrokerInfo* CoordinatorBrokerOf(const ClusterMetadata& m,
                                      int32_t partition) {
  if (m.brokers.empty()) return nullptr;
  // Every registered broker, fenced or not, so that the choice is stable.
  auto it = m.brokers.begin();
  std::advance(it, partition % static_cast<int32_t>(m.brokers.size()));
  return &it->second;
}

CoordinatorAddress FindCoordinatorOf(const BrokerState& b, CoordinatorKind kind,
                                     std::string_view key) {
  if (b.controller() == nullptr) {
    return {b.options().node_id, b.advertised_host(), b.advertised_port()};
  }
  // The controller's newest snapshot, not the one this broker applied last:
  // every broker must answer alike as soon as the cluster is up.
  const std::shared_ptr<const ClusterMetadata> m = b.controller()->metadata();
  const BrokerInfo* info = nullptr;
  if (kind == CoordinatorKind::kGroup) {
    info = CoordinatorBrokerOf(*m, CoordinatorPartition(key));
  } else if (const PartitionState* p = m->partition(
                 kTransactionStateTopic, CoordinatorPartition(key))) {
    info = m->broker(p->leader);
  }
  if (info == nullptr) return {.fenced = true};
  return {info->node_id, info->host, info->port, info->fenced};
}

protocol::ErrorCode CoordinatorError(const BrokerState& b, CoordinatorKind kind,
                                     std::string_view key) {
  using protocol::ErrorCode;
  if (b.controller() == nullptr) return ErrorCode::kNone;
  if (kind == CoordinatorKind::kTransaction &&
      b.transactions().LoadedEpoch(CoordinatorPartition(key)).has_value())
    return ErrorCode::kNone;
  const bool named =
      FindCoordinatorOf(b, kind, key).node_id == b.options().node_id;
  if (kind == CoordinatorKind::kGroup)
    return named ? ErrorCode::kNone : ErrorCode::kNotCoordinator;
  return named ? ErrorCode::kCoordinatorLoadInProgress
               : ErrorCode::kNotCoordinator;
}

ApiError EnsureTransactionStateTopic(BrokerState& b) {
  if (b.controller() == nullptr) return {};
  const std::shared_ptr<const ClusterMetadata> m = b.controller()->metadata();
  if (m->topics.contains(std::string(kTransactionStateTopic))) return {};
  const int32_t replicas =
      std::min<int32_t>(3, static_cast<int32_t>(m->brokers.size()));
  if (replicas <= 0)
    return Error(protocol::ErrorCode::kCoordinatorNotAvailable);
  ApiError e = b.CreateTopic(
      std::string(kTransactionStateTopic), kCoordinatorPartitions,
      {{"cleanup.policy", "compact"},
       {"min.insync.replicas", std::to_string(std::min(2, replicas))}},
      /*validate_only=*/false, replicas);
  if (e.code == protocol::ErrorCode::kTopicAlreadyExists) return {};
  if (!e.ok()) {
    LogWarning("could not create ", std::string(kTransactionStateTopic), ": ",
               e.message);
  }
  return e;
}

}  // namespace exactly::broker
