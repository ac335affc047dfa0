#include "cluster/coordinator_log.h"

#include <algorithm>
#include <memory>
#include <set>

#include "cluster/appender.h"
#include "cluster/cluster_membership.h"
#include "replication/delayed_produce.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

// How long a state write waits for the in-sync replicas: Kafka's coordinators
// wait request.timeout.ms.
constexpr int32_t kStateWriteTimeoutMs = 30000;

}  // namespace

void AppendToCoordinatorLog(BrokerState& b, std::string_view topic_name,
                            int32_t index, std::string batch,
                            absl::AnyInvocable<void(ErrorCode)> done) {
  Topic* topic = b.topics().Find(topic_name);
  Partition* p = topic == nullptr ? nullptr : topic->partition(index);
  if (p == nullptr || LeadershipError(b, topic_name, index) != ErrorCode::kNone)
    return done(ErrorCode::kNotLeaderOrFollower);
  if (InSyncReplicaCount(*p) < RequiredInSyncReplicas(b, *topic, *p))
    return done(ErrorCode::kNotEnoughReplicas);
  AppendCoordinatorBatch(b, *p, batch);
  const int64_t required = p->log().log_end_offset();
  std::string name(topic_name);
  PublishAppendsAfterCommit(b, {{name, index}});
  b.commits().AfterCommit([&b, name, index, required, done = std::move(done)](
                              const absl::Status& s) mutable {
    if (!s.ok()) return done(ErrorCode::kKafkaStorageError);
    Partition* p = b.FindPartition(name, index);
    if (p == nullptr) return done(ErrorCode::kNotLeaderOrFollower);
    if (!NeedsReplicaAcks(*p)) return done(ErrorCode::kNone);
    auto delayed = std::make_shared<DelayedProduce>(
        b, std::vector<DelayedProduce::Wait>{{name, index, required}},
        kStateWriteTimeoutMs,
        [done = std::move(done)](
            const std::vector<DelayedProduce::Wait>& waits) mutable {
          done(waits.front().outcome);
        });
    delayed->Start();
  });
}

ErrorCode CoordinatorWriteError(ErrorCode cause) {
  if (cause == ErrorCode::kNone) return cause;
  const bool moved = cause == ErrorCode::kNotLeaderOrFollower ||
                     cause == ErrorCode::kKafkaStorageError;
  return moved ? ErrorCode::kNotCoordinator
               : ErrorCode::kCoordinatorNotAvailable;
}

LeadershipChanges ChangedLeaderships(BrokerState& b, const ClusterMetadata& m,
                                     std::string_view topic,
                                     const std::map<int32_t, int32_t>& loaded) {
  std::map<int32_t, int32_t> leading;  // partition -> leader epoch
  auto t = m.topics.find(std::string(topic));
  if (t != m.topics.end() && !b.faults().isolated()) {
    const auto& partitions = t->second->partitions;
    for (size_t i = 0; i < partitions.size(); ++i) {
      if (partitions[i].leader == b.options().node_id)
        leading[static_cast<int32_t>(i)] =
            std::max(partitions[i].leader_epoch, 0);
    }
  }
  LeadershipChanges changes;
  for (const auto& [index, epoch] : loaded) {
    auto l = leading.find(index);
    if (l == leading.end() || l->second != epoch)
      changes.unload.push_back(index);
  }
  for (const auto& [index, epoch] : leading) {
    auto l = loaded.find(index);
    if (l == loaded.end() || l->second != epoch)
      changes.load.emplace_back(index, epoch);
  }
  return changes;
}

}  // namespace exactly::broker
