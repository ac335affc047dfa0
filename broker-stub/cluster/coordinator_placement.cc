#include "cluster/coordinator_placement.h"

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "controller/controller.h"
#include "group/group_coordinator.h"
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

std::string_view CoordinatorTopic(CoordinatorKind kind) {
  return kind == CoordinatorKind::kGroup ? kConsumerOffsetsTopic
                                         : kTransactionStateTopic;
}

namespace {

// The epoch this broker coordinates partition `index` of `kind`'s topic at.
std::optional<int32_t> LoadedEpoch(const BrokerState& b, CoordinatorKind kind,
                                   int32_t index) {
  if (kind == CoordinatorKind::kTransaction)
    return b.transactions().LoadedEpoch(index);
  const std::map<int32_t, int32_t>& loaded = b.groups().loaded_partitions();
  auto it = loaded.find(index);
  if (it == loaded.end()) return std::nullopt;
  return it->second;
}

}  // namespace

CoordinatorAddress FindCoordinatorOf(const BrokerState& b, CoordinatorKind kind,
                                     std::string_view key,
                                     std::string_view listener) {
  if (b.controller() == nullptr) {
    return {b.options().node_id, b.advertised_host(),
            b.advertised_port(listener)};
  }
  // The controller's newest snapshot, not the one this broker applied last:
  // every broker must answer alike as soon as the cluster is up.
  const std::shared_ptr<const ClusterMetadata> m = b.controller()->metadata();
  const BrokerInfo* info = nullptr;
  if (const PartitionState* p =
          m->partition(CoordinatorTopic(kind), CoordinatorPartition(key))) {
    info = m->broker(p->leader);
  }
  if (info == nullptr) return {.fenced = true};
  return {info->node_id, info->host, info->PortFor(listener), info->fenced};
}

protocol::ErrorCode CoordinatorError(const BrokerState& b, CoordinatorKind kind,
                                     std::string_view key) {
  using protocol::ErrorCode;
  if (b.controller() == nullptr) return ErrorCode::kNone;
  if (LoadedEpoch(b, kind, CoordinatorPartition(key)).has_value())
    return ErrorCode::kNone;
  const bool named =
      FindCoordinatorOf(b, kind, key).node_id == b.options().node_id;
  return named ? ErrorCode::kCoordinatorLoadInProgress
               : ErrorCode::kNotCoordinator;
}

ApiError EnsureCoordinatorTopic(BrokerState& b, CoordinatorKind kind) {
  if (b.controller() == nullptr) return {};
  const std::string name(CoordinatorTopic(kind));
  const std::shared_ptr<const ClusterMetadata> m = b.controller()->metadata();
  if (m->topics.contains(name)) return {};
  const int32_t replicas =
      std::min<int32_t>(3, static_cast<int32_t>(m->brokers.size()));
  if (replicas <= 0)
    return Error(protocol::ErrorCode::kCoordinatorNotAvailable);
  ApiError e = b.CreateTopic(
      name, kCoordinatorPartitions,
      {{"cleanup.policy", "compact"},
       {"segment.bytes", std::to_string(b.options().coordinator_segment_bytes)},
       {"min.insync.replicas", std::to_string(std::min(2, replicas))}},
      /*validate_only=*/false, replicas);
  if (e.code == protocol::ErrorCode::kTopicAlreadyExists) return {};
  if (!e.ok()) {
    LogWarning("could not create ", name, ": ", e.message);
  }
  return e;
}

}  // namespace exactly::broker
