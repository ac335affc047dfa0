// WriteTxnMarkers: a COMMIT or ABORT marker per producer on the partitions
// named. It comes from a transaction coordinator of the cluster
// (txn/marker_sender.h; a single broker's coordinator writes its markers
// directly), or from an admin client ending a hanging transaction (KIP-664's
// abortTransaction, with the epochs DescribeProducers reported). Only the
// partition's leader writes one; it answers once the marker is committed, and
// where the partition has followers once every in-sync replica has it
// (acks=all, as Kafka appends markers). A marker on __consumer_offsets-N (a
// cluster's coordinator ending a transaction that committed a group's offsets)
// completes the pending offsets of that producer in the groups of partition N.
//
// Faults::HoldMarkers keeps every request here, neither applied nor answered,
// until Faults::ReleaseMarkers handles it as it would have been (or a stop of
// the broker drops it).
#include <array>
#include <functional>
#include <memory>

#include "cluster/appender.h"
#include "cluster/cluster_membership.h"
#include "cluster/coordinator_placement.h"
#include "group/group_coordinator.h"
#include "handlers/transaction_handlers.h"
#include "replication/delayed_produce.h"

namespace exactly::broker {

namespace {

// How long a marker waits for the ISR: Kafka's request.timeout.ms default.
constexpr int32_t kMarkerTimeoutMs = 30000;

// Once the markers are written (and replicated): a marker on
// __consumer_offsets-N applies (commit) or drops (abort) its producer's
// pending offsets in the groups this broker coordinates on partition N, as
// Kafka's GroupCoordinator.onTransactionCompleted. `commits[i]` is the result
// of the request's marker i.
void CompleteGroupOffsets(BrokerState& b,
                          const protocol::WriteTxnMarkersResponse& response,
                          const std::vector<bool>& commits) {
  for (size_t i = 0; i < response.markers.size() && i < commits.size(); ++i) {
    const auto& rm = response.markers[i];
    for (const auto& rt : rm.topics) {
      if (rt.name != kConsumerOffsetsTopic) continue;
      for (const auto& rp : rt.partitions) {
        if (rp.error_code != 0) continue;
        for (const std::string& group :
             b.groups().GroupsWithPendingTxnOffsets(rm.producer_id)) {
          if (CoordinatorPartition(group) == rp.index)
            b.groups().CompleteTxnOffsets(group, rm.producer_id, commits[i]);
        }
      }
    }
  }
}

// A marker Kafka cannot build a control batch for: no producer id, or epoch
// -1. Kafka (3.9) then fails the whole request, every partition of every
// marker UNKNOWN_SERVER_ERROR; the markers before it in the request are
// written, it and those after are not (checked against Kafka 3.9.1 by
// tests/integration/sdk/hanging_transaction_wire_test.cc).
bool Unbuildable(BrokerState& b,
                 const protocol::WriteTxnMarkersRequest::Marker& m) {
  if (m.producer_id != -1 && m.producer_epoch != -1) return false;
  // Kafka builds batches only for partitions it leads.
  for (const auto& t : m.topics) {
    for (int32_t index : t.partition_indexes) {
      if (b.FindPartition(t.name, index) != nullptr) return true;
    }
  }
  return false;
}

protocol::WriteTxnMarkersResponse FailedWhole(
    const protocol::WriteTxnMarkersRequest& request,
    protocol::ErrorCode error = protocol::ErrorCode::kUnknownServerError) {
  protocol::WriteTxnMarkersResponse response;
  for (const auto& m : request.markers) {
    auto& rm = response.markers.emplace_back();
    rm.producer_id = m.producer_id;
    for (const auto& t : m.topics) {
      auto& rt = rm.topics.emplace_back();
      rt.name = t.name;
      for (int32_t index : t.partition_indexes) {
        rt.partitions.push_back({index, static_cast<int16_t>(error), {}});
      }
    }
  }
  return response;
}

}  // namespace

void HandleWriteTxnMarkers(BrokerState& b, const protocol::RequestHeader& h,
                           protocol::WriteTxnMarkersRequest& request,
                           Responder r) {
  using protocol::ErrorCode;
  if (b.faults().holding_markers()) {
    // Held: kept as it is, to be handled at the release, on this loop. A
    // stop of the broker drops what the faults hold (BrokerImpl::Stop), so a
    // held request never runs against a later `b`.
    struct Held {
      protocol::RequestHeader header;
      protocol::WriteTxnMarkersRequest request;
      Responder responder;
    };
    auto held =
        std::make_shared<Held>(Held{h, std::move(request), std::move(r)});
    std::function<void()> handle = [&b, held] {
      HandleWriteTxnMarkers(b, held->header, held->request,
                            std::move(held->responder));
    };
    if (b.faults().HoldMarkerRequest(handle)) return;
    // Released meanwhile: handled now.
    request = std::move(held->request);
    r = std::move(held->responder);
  }
  // Kafka's check: CLUSTER_ACTION on the cluster (brokers send it; those of
  // this process are let through, see handlers/authorize.h).
  if (!AllowedOnCluster(b, r, AclOperation::kClusterAction))
    return r.Send(FailedWhole(request, ErrorCode::kClusterAuthorizationFailed));
  protocol::WriteTxnMarkersResponse response;
  std::vector<bool> commits;
  for (const auto& m : request.markers) commits.push_back(m.transaction_result);
  // Markers on partitions with followers, answered once replicated.
  std::vector<DelayedProduce::Wait> waits;
  std::vector<std::array<size_t, 3>> waiting;  // marker, topic, partition
  for (const auto& m : request.markers) {
    if (Unbuildable(b, m)) {
      response = FailedWhole(request);
      waits.clear();
      waiting.clear();
      break;
    }
    auto& rm = response.markers.emplace_back();
    rm.producer_id = m.producer_id;
    const protocol::ControlType type = m.transaction_result
                                           ? protocol::ControlType::kCommit
                                           : protocol::ControlType::kAbort;
    for (const auto& t : m.topics) {
      auto& rt = rm.topics.emplace_back();
      rt.name = t.name;
      for (int32_t index : t.partition_indexes) {
        auto& rp = rt.partitions.emplace_back();
        rp.index = index;
        auto fail = [&](ErrorCode code) {
          rp.error_code = static_cast<int16_t>(code);
        };
        if (auto injected = b.faults().TakeError(h.api_key, &t.name, index)) {
          rp.error_code = *injected;
          continue;
        }
        Partition* p = b.FindPartition(t.name, index);
        if (p == nullptr) {
          fail(ErrorCode::kUnknownTopicOrPartition);
          continue;
        }
        // A follower must not write a marker of its own: its log would
        // diverge from the leader's.
        if (ErrorCode e = LeadershipError(b, t.name, index);
            e != ErrorCode::kNone) {
          fail(e);
          continue;
        }
        // Older than the epoch -1 of a producer the partition has not seen,
        // so older than any: refused whether it knows the producer or not.
        if (m.producer_epoch < -1) {
          fail(ErrorCode::kInvalidProducerEpoch);
          continue;
        }
        // Kafka appends markers with acks=all: refused up front when too few
        // replicas are in sync, answered once the high watermark passes them.
        const bool replicated = NeedsReplicaAcks(*p);
        if (const Topic* topic = b.topics().Find(t.name);
            topic != nullptr &&
            InSyncReplicaCount(*p) < RequiredInSyncReplicas(b, *topic, *p)) {
          fail(ErrorCode::kNotEnoughReplicas);
          continue;
        }
        MarkerOutcome outcome = WriteTxnMarker(
            b, *p, m.producer_id, m.producer_epoch, type, m.coordinator_epoch);
        rp.error_code = outcome.error.code_value();
        if (outcome.error.ok() && replicated) {
          waits.push_back({t.name, index, outcome.offset + 1});
          waiting.push_back({response.markers.size() - 1, rm.topics.size() - 1,
                             rt.partitions.size() - 1});
        }
      }
    }
  }
  b.commits().AfterCommit(
      [&b, response = std::move(response), r = std::move(r),
       waits = std::move(waits), waiting = std::move(waiting),
       commits = std::move(commits)](const absl::Status& status) mutable {
        if (!status.ok()) {
          for (auto& m : response.markers)
            for (auto& t : m.topics)
              for (auto& p : t.partitions)
                if (p.error_code == 0)
                  p.error_code =
                      static_cast<int16_t>(ErrorCode::kKafkaStorageError);
          return r.Send(response);
        }
        if (waits.empty()) {
          CompleteGroupOffsets(b, response, commits);
          return r.Send(response);
        }
        auto delayed = std::make_shared<DelayedProduce>(
            b, std::move(waits), kMarkerTimeoutMs,
            [&b, response = std::move(response), r = std::move(r),
             waiting = std::move(waiting), commits = std::move(commits)](
                const std::vector<DelayedProduce::Wait>& outcome) mutable {
              for (size_t i = 0; i < outcome.size(); ++i) {
                auto [m, t, p] = waiting[i];
                response.markers[m].topics[t].partitions[p].error_code =
                    static_cast<int16_t>(outcome[i].outcome);
              }
              CompleteGroupOffsets(b, response, commits);
              r.Send(response);
            });
        delayed->Start();
      });
}

}  // namespace exactly::broker
