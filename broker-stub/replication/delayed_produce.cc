#include "replication/delayed_produce.h"

#include <algorithm>
#include <chrono>

#include "controller/cluster_metadata.h"

namespace exactly::broker {

using protocol::ErrorCode;

bool NeedsReplicaAcks(const Partition& partition) {
  const PartitionReplication& r = partition.replication();
  return r.role == PartitionReplication::Role::kLeader &&
         r.replication_factor > 1;
}

size_t InSyncReplicaCount(const Partition& partition) {
  return NeedsReplicaAcks(partition)
             ? partition.replication().followers.isr().size()
             : 1;
}

size_t RequiredInSyncReplicas(const BrokerState& b, const Topic& topic,
                              const Partition& partition) {
  return std::min(
      static_cast<size_t>(std::max(b.MinInsyncReplicas(topic), 1)),
      std::max<size_t>(partition.replication().replication_factor, 1));
}

DelayedProduce::DelayedProduce(BrokerState& b, std::vector<Wait> waits,
                               int32_t timeout_ms, Done done)
    : b_(b),
      waits_(std::move(waits)),
      timeout_ms_(timeout_ms),
      done_(std::move(done)),
      timer_(b.io()) {}

void DelayedProduce::Start() {
  if (TryComplete(false)) return;
  for (const Wait& w : waits_)
    if (Partition* p = b_.FindPartition(w.topic, w.partition))
      p->AddWaiter(weak_from_this());
  timer_.expires_after(std::chrono::milliseconds(std::max(0, timeout_ms_)));
  timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec) self->TryComplete(true);
  });
}

bool DelayedProduce::TryComplete(bool timed_out) {
  if (finished_) return true;
  bool all_done = true;
  for (Wait& w : waits_) {
    if (w.done) continue;
    const Partition* p = b_.FindPartition(w.topic, w.partition);
    if (p == nullptr) {
      w.outcome = ErrorCode::kUnknownTopicOrPartition;
      w.done = true;
    } else if (p->replication().role != PartitionReplication::Role::kLeader) {
      w.outcome = ErrorCode::kNotLeaderOrFollower;
      w.done = true;
    } else if (p->log().high_watermark() >= w.required_offset) {
      // Kafka checks min.insync.replicas again once the records are in: an
      // ISR that shrank meanwhile means fewer copies than the topic demands.
      const Topic* topic = b_.topics().Find(w.topic);
      if (topic != nullptr &&
          InSyncReplicaCount(*p) < RequiredInSyncReplicas(b_, *topic, *p))
        w.outcome = ErrorCode::kNotEnoughReplicasAfterAppend;
      w.done = true;
    } else if (timed_out) {
      w.outcome = ErrorCode::kRequestTimedOut;
      w.done = true;
    }
    all_done &= w.done;
  }
  if (!all_done) return false;
  finished_ = true;
  timer_.cancel();
  done_(waits_);
  return true;
}

}  // namespace exactly::broker
