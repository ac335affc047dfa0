#include "cluster/cluster_membership.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cluster/consumer_offsets_log.h"
#include "cluster/retention.h"
#include "cluster/topic_admin.h"
#include "replication/high_watermark.h"
#include "replication/replica_fetcher.h"
#include "txn/transaction_coordinator.h"
#include "util/logging.h"

namespace exactly::broker {

using protocol::ErrorCode;

namespace {

// Leads, follows or stands aside for one partition as `p` says.
void TakeUpRole(BrokerState& b, const ClusterMetadata& m,
                const std::string& topic, const PartitionState& p,
                Partition& partition) {
  PartitionReplication& r = partition.replication();
  ReplicaFetchers& fetchers = *b.replica_fetchers();
  const int32_t self = b.options().node_id;
  const int32_t epoch = std::max(p.leader_epoch, 0);
  r.replication_factor = p.replicas.size();
  if (p.leader == self) {
    if (r.role != PartitionReplication::Role::kLeader ||
        r.leader_epoch != epoch) {
      // A new leadership: what the followers hold is learnt afresh from their
      // fetches, and the new epoch starts at this log's end.
      fetchers.Unfollow(topic, partition.index());
      r.role = PartitionReplication::Role::kLeader;
      r.leader = self;
      r.leader_epoch = epoch;
      r.followers.BecomeLeader(self, p.replicas, p.isr, b.NowMs());
      r.epochs.Assign(epoch, partition.log().log_end_offset());
      LogInfo("leading ", topic, "-", partition.index(), " at epoch ", epoch);
    } else {
      r.followers.SetIsr(p.isr);
    }
    // A smaller ISR may let the high watermark move; a produce waiting for
    // acks=all may now complete or fail.
    UpdateHighWatermark(partition);
    partition.WakeWaiters();
    return;
  }
  r.role = PartitionReplication::Role::kFollower;
  r.leader_epoch = epoch;
  const BrokerInfo* leader = m.broker(p.leader);
  // An isolated broker reaches no leader (Cluster::Isolate).
  if (!p.IsReplica(self) || leader == nullptr || leader->fenced ||
      b.faults().isolated()) {
    fetchers.Unfollow(topic, partition.index());
    r.leader = p.leader;
    return;
  }
  r.leader = p.leader;
  fetchers.Follow(topic, partition.index(), p.leader, epoch, leader->host,
                  leader->port);
  // Produces parked here while it led answer now (NOT_LEADER_OR_FOLLOWER).
  partition.WakeWaiters();
}

// The topic's config as the controller holds it. The broker that took the
// request checked every override; one this broker cannot take is logged.
TopicConfig ControllerConfig(
    const std::string& topic,
    const std::map<std::string, std::string>& configs) {
  TopicConfig config;
  for (const auto& [key, value] : configs) {
    if (absl::Status s = config.Set(key, value); !s.ok())
      LogWarning("topic ", topic, ": config ", key, ": ", s.message());
  }
  return config;
}

// The controller's overrides for a topic this broker already holds, when they
// differ from its own (AlterConfigs on another broker).
void TakeUpConfigs(BrokerState& b, Topic& topic,
                   const std::map<std::string, std::string>& configs) {
  if (topic.config.explicit_values() == configs) return;
  topic.config = ControllerConfig(topic.name, configs);
  topic.config.SetInherited(b.topics().inherited());
  b.PersistTopic(topic);
  for (const auto& partition : topic.partitions)
    EnforceRetention(b, *partition);
}

}  // namespace

void ApplyClusterMetadata(BrokerState& b,
                          std::shared_ptr<const ClusterMetadata> metadata) {
  const ClusterMetadata* applied = b.cluster_metadata();
  if (applied != nullptr && applied->version >= metadata->version) return;
  // A topic whose placement is the very one applied before, among the same
  // brokers, needs nothing: most snapshots change a few partitions.
  const bool same_brokers =
      applied != nullptr && applied->brokers == metadata->brokers;
  // The dynamic broker configs: the cluster-wide default and this broker's
  // own, which topics without an override inherit.
  DynamicBrokerConfigs dynamic;
  if (auto it = metadata->broker_configs.find("");
      it != metadata->broker_configs.end())
    dynamic.cluster_default = it->second;
  if (auto it =
          metadata->broker_configs.find(absl::StrCat(b.options().node_id));
      it != metadata->broker_configs.end())
    dynamic.per_broker = it->second;
  if (!(dynamic == b.dynamic_configs()))
    ApplyDynamicBrokerConfigs(b, std::move(dynamic));
  for (const auto& [name, placement] : metadata->topics) {
    if (same_brokers) {
      auto before = applied->topics.find(name);
      if (before != applied->topics.end() && before->second == placement)
        continue;
    }
    const int32_t partitions =
        static_cast<int32_t>(placement->partitions.size());
    Topic* topic = b.topics().Find(name);
    if (topic == nullptr) {
      topic = &b.AddTopic(name, partitions,
                          ControllerConfig(name, placement->configs));
    } else {
      if (topic->partition_count() < partitions) {
        b.topics().Grow(*topic, partitions);
        b.PersistTopic(*topic);
      }
      TakeUpConfigs(b, *topic, placement->configs);
    }
    for (int32_t i = 0; i < partitions; ++i) {
      const PartitionState& p = placement->partitions[static_cast<size_t>(i)];
      Partition& partition = *topic->partition(i);
      partition.set_leader_epoch(std::max(p.leader_epoch, 0));
      TakeUpRole(b, *metadata, name, p, partition);
    }
  }
  // Topics the controller deleted since the last snapshot go here too. (Only
  // those: a topic this broker loaded that the controller never knew stays.)
  if (applied != nullptr) {
    for (const auto& [name, placement] : applied->topics) {
      if (metadata->topics.count(name) != 0) continue;
      Topic* topic = b.topics().Find(name);
      if (topic == nullptr) continue;
      for (int32_t i = 0; i < topic->partition_count(); ++i)
        b.replica_fetchers()->Unfollow(name, i);
      DeleteLocalTopic(b, *topic);
    }
  }
  b.set_cluster_metadata(metadata);
  // The coordinators move with the leaderships of their logs' partitions.
  b.transactions().TakeUpLeaderships(*metadata);
  TakeUpGroupLeaderships(b, *metadata);
}

ErrorCode LeadershipError(const BrokerState& b, std::string_view topic,
                          int32_t partition) {
  const ClusterMetadata* m = b.cluster_metadata();
  if (b.controller() == nullptr || m == nullptr) return ErrorCode::kNone;
  const PartitionState* p = m->partition(topic, partition);
  // A partition this broker holds that the controller does not (deleted
  // while this broker was down): a stray, served by no one, as in Kafka.
  if (p == nullptr) return ErrorCode::kUnknownTopicOrPartition;
  if (p->leader == b.options().node_id) return ErrorCode::kNone;
  if (p->leader == kNoLeader) return ErrorCode::kLeaderNotAvailable;
  return ErrorCode::kNotLeaderOrFollower;
}

ErrorCode LeaderEpochError(const BrokerState& b, std::string_view topic,
                           const Partition& partition,
                           int32_t current_leader_epoch) {
  if (ErrorCode e = LeadershipError(b, topic, partition.index());
      e != ErrorCode::kNone)
    return e;
  if (current_leader_epoch < 0 ||
      current_leader_epoch == partition.leader_epoch())
    return ErrorCode::kNone;
  return current_leader_epoch < partition.leader_epoch()
             ? ErrorCode::kFencedLeaderEpoch
             : ErrorCode::kUnknownLeaderEpoch;
}

void StopFollowing(BrokerState& b) {
  ReplicaFetchers* fetchers = b.replica_fetchers();
  if (fetchers == nullptr) return;
  for (const auto& [name, topic] : b.topics().all()) {
    for (int32_t i = 0; i < topic->partition_count(); ++i)
      fetchers->Unfollow(name, i);
  }
}

void RestartFollowing(BrokerState& b) {
  StopFollowing(b);
  const ClusterMetadata* m = b.cluster_metadata();
  if (m == nullptr || b.faults().isolated()) return;
  const int32_t self = b.options().node_id;
  for (const auto& [name, placement] : m->topics) {
    for (size_t i = 0; i < placement->partitions.size(); ++i) {
      const PartitionState& p = placement->partitions[i];
      const BrokerInfo* leader = m->broker(p.leader);
      if (p.leader == self || !p.IsReplica(self) || leader == nullptr ||
          leader->fenced ||
          b.FindPartition(name, static_cast<int32_t>(i)) == nullptr)
        continue;
      b.replica_fetchers()->Follow(name, static_cast<int32_t>(i), p.leader,
                                   std::max(p.leader_epoch, 0), leader->host,
                                   leader->port);
    }
  }
}

}  // namespace exactly::broker
