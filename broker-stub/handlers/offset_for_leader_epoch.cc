// OffsetForLeaderEpoch: where an epoch ends on this leader's log, from its
// leader-epoch cache. Followers ask it before they copy from a new leader
// (replication/replica_fetcher.cc); consumers ask it after a leader change
// (KIP-320) to see whether the log they read was truncated.
#include "cluster/cluster_membership.h"
#include "handlers/authorize.h"
#include "handlers/handlers.h"
#include "replication/leader_epoch_cache.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::OffsetForLeaderEpochResponse;

}  // namespace

void HandleOffsetForLeaderEpoch(BrokerState& b, const RequestHeader& h,
                                protocol::OffsetForLeaderEpochRequest& request,
                                Responder r) {
  OffsetForLeaderEpochResponse response;
  for (const auto& t : request.topics) {
    OffsetForLeaderEpochResponse::Topic& rt = response.topics.emplace_back();
    rt.name = t.name;
    // Kafka's checks: CLUSTER_ACTION for a follower, DESCRIBE on the topic
    // for a consumer.
    const ErrorCode denied =
        request.replica_id >= 0
            ? (AllowedOnCluster(b, r, AclOperation::kClusterAction)
                   ? ErrorCode::kNone
                   : ErrorCode::kClusterAuthorizationFailed)
        : Allowed(b, r, AclOperation::kDescribe, AclResourceType::kTopic,
                  t.name)
            ? ErrorCode::kNone
            : ErrorCode::kTopicAuthorizationFailed;
    for (const auto& p : t.partitions) {
      OffsetForLeaderEpochResponse::Partition& rp =
          rt.partitions.emplace_back();
      rp.index = p.index;
      auto fail = [&rp](ErrorCode code) {
        rp.error_code = static_cast<int16_t>(code);
      };
      if (auto injected = b.faults().TakeError(h.api_key, &t.name, p.index)) {
        rp.error_code = *injected;
        continue;
      }
      if (denied != ErrorCode::kNone) {
        fail(denied);
        continue;
      }
      const Partition* partition = b.FindPartition(t.name, p.index);
      if (partition == nullptr) {
        fail(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      if (ErrorCode e =
              LeaderEpochError(b, t.name, *partition, p.current_leader_epoch);
          e != ErrorCode::kNone) {
        fail(e);
        continue;
      }
      const PartitionLog& log = partition->log();
      const LeaderEpochCache& epochs = partition->replication().epochs;
      EpochEndOffset end;
      if (epochs.entries().empty()) {
        // A broker that is the whole cluster has led at one epoch since the
        // log began.
        LeaderEpochCache only;
        only.Assign(partition->leader_epoch(), log.log_start_offset());
        end = only.EndOffsetFor(p.leader_epoch, log.log_end_offset());
      } else {
        end = epochs.EndOffsetFor(p.leader_epoch, log.log_end_offset());
      }
      rp.leader_epoch = end.epoch;
      rp.end_offset = end.end_offset;
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
