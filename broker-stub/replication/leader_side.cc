#include "replication/leader_side.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "controller/controller.h"
#include "replication/high_watermark.h"
#include "util/logging.h"

namespace exactly::broker {
namespace {

// Proposes `isr` for a partition this broker leads; the controller's new
// snapshot (applied on this broker's loop) brings it into effect.
void ProposeIsr(BrokerState& b, const std::string& topic, int32_t index,
                const ReplicaList& isr) {
  const ClusterMetadata* m = b.cluster_metadata();
  const PartitionState* p = m ? m->partition(topic, index) : nullptr;
  if (p == nullptr) return;
  ApiError e =
      b.controller()->AlterIsr(topic, index, b.options().node_id,
                               p->leader_epoch, p->partition_epoch, isr);
  if (!e.ok()) {
    // A stale view (the snapshot is on its way): the next fetch or check
    // proposes again.
    LogDebug("ISR change of ", topic, "-", index, " refused: ", e.message);
    return;
  }
  LogInfo("ISR of ", topic, "-", index, " is now [", absl::StrJoin(isr, ","),
          "]");
}

}  // namespace

void NoteFollowerFetch(BrokerState& b, const protocol::FetchRequest& request) {
  if (b.controller() == nullptr) return;
  const int64_t now = b.NowMs();
  for (const auto& t : request.topics) {
    for (const auto& fp : t.partitions) {
      Partition* p = b.FindPartition(t.name, fp.index);
      if (p == nullptr) continue;
      PartitionReplication& r = p->replication();
      if (r.role != PartitionReplication::Role::kLeader) continue;
      if (!r.followers.OnFollowerFetch(request.replica_id, fp.fetch_offset, now,
                                       p->log().durable_end_offset()))
        continue;
      if (UpdateHighWatermark(*p)) p->WakeWaiters();
      const int64_t epoch_start =
          r.epochs.latest() ? r.epochs.latest()->start_offset : 0;
      ReplicaList joining =
          r.followers.CaughtUpFollowers(p->log().high_watermark(), epoch_start);
      // Only the follower that fetched, as Kafka's maybeExpandIsr: another
      // one's last fetch may be from before it died, and the controller
      // refuses an ISR naming a fenced broker, which would keep this one out
      // too.
      std::erase_if(joining,
                    [&](int32_t id) { return id != request.replica_id; });
      if (joining.empty()) continue;
      ReplicaList isr = r.followers.isr();
      isr.insert(isr.end(), joining.begin(), joining.end());
      ProposeIsr(b, t.name, fp.index, isr);
    }
  }
}

void ShrinkIsrs(BrokerState& b, int64_t lag_max_ms) {
  if (b.controller() == nullptr) return;
  const int64_t now = b.NowMs();
  for (const auto& [name, topic] : b.topics().all()) {
    for (const auto& p : topic->partitions) {
      PartitionReplication& r = p->replication();
      if (r.role != PartitionReplication::Role::kLeader) continue;
      ReplicaList lagging = r.followers.LaggingFollowers(
          now, p->log().durable_end_offset(), lag_max_ms);
      if (lagging.empty()) continue;
      ReplicaList isr = r.followers.isr();
      std::erase_if(isr, [&](int32_t id) {
        return std::find(lagging.begin(), lagging.end(), id) != lagging.end();
      });
      ProposeIsr(b, name, p->index(), isr);
    }
  }
}

}  // namespace exactly::broker
