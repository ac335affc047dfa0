// Produce: validate and append each partition's batches, then answer once the
// appends are durable (acks=1 and acks=all are the same on a single broker;
// acks=0 gets no answer, and the connection is closed if a partition refused
// its batch). In a cluster, a transactional batch whose
// transaction is coordinated by another broker first waits for that broker's
// verification (txn/remote_verification.h).
#include <optional>

#include "absl/strings/str_cat.h"
#include "cluster/appender.h"
#include "cluster/cluster_membership.h"
#include "cluster/coordinator_placement.h"
#include "handlers/authorize.h"
#include "handlers/handlers.h"
#include "protocol/produce_request_check.h"
#include "protocol/record_batch.h"
#include "replication/delayed_produce.h"
#include "txn/remote_verification.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::ProduceResponse;

// The first batch of a partition's records when it is transactional and would
// open a transaction on the partition: the batches KIP-890 part 1 verifies.
// One that continues a transaction already open here was verified with its
// first batch.
std::optional<protocol::RecordBatchHeader> OpeningTransactionalBatch(
    BrokerState& b, const protocol::ProduceRequest& request,
    const Partition& partition, std::string_view records) {
  if (!b.options().transaction_partition_verification ||
      !request.transactional_id.has_value()) {
    return std::nullopt;
  }
  absl::StatusOr<protocol::RecordBatchHeader> first =
      protocol::ParseBatchHeader(records);
  if (!first.ok() || !first->is_transactional() ||
      partition.transactions().IsOpen(first->producer_id)) {
    return std::nullopt;  // not transactional, or refused later by the checks
  }
  return *first;
}

// KIP-890 part 1: a transactional batch that would open a transaction on the
// partition is appended only if the coordinator has the partition in that
// producer's ongoing transaction: this broker's coordinator, or the verdict
// another broker's sent (`verified`).
ApiError VerifyTransactionalBatch(BrokerState& b,
                                  const protocol::ProduceRequest& request,
                                  const Partition& partition,
                                  const std::string& topic, int32_t index,
                                  std::string_view records,
                                  const VerifiedPartitions* verified) {
  std::optional<protocol::RecordBatchHeader> first =
      OpeningTransactionalBatch(b, request, partition, records);
  if (!first) return {};
  if (verified != nullptr) {
    if (auto it = verified->find({topic, index}); it != verified->end())
      return it->second;
  }
  if (CoordinatorError(b, CoordinatorKind::kTransaction,
                       *request.transactional_id) != ErrorCode::kNone) {
    // Became this partition's opening batch after the coordinator was asked
    // (a leadership moved here meanwhile): the producer retries.
    return Error(ErrorCode::kNotEnoughReplicas,
                 absl::StrCat(topic, "[", index,
                              "]: the transaction is not verified yet"));
  }
  return b.transactions().VerifyPartitionInTransaction(
      *request.transactional_id, first->producer_id, first->producer_epoch,
      topic, index);
}

// The partitions of a request whose opening transactional batches another
// broker, the transaction's coordinator, must verify; with the producer id
// and epoch to ask about (the first such batch's: a producer sends one).
struct RemoteVerification {
  std::vector<std::pair<std::string, int32_t>> partitions;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};
RemoteVerification NeedsRemoteVerification(
    BrokerState& b, const protocol::ProduceRequest& request) {
  RemoteVerification out;
  if (b.controller() == nullptr || !request.transactional_id.has_value() ||
      request.transactional_id->empty() ||
      CoordinatorError(b, CoordinatorKind::kTransaction,
                       *request.transactional_id) == ErrorCode::kNone)
    return out;
  for (const auto& t : request.topics) {
    for (const auto& p : t.partitions) {
      Partition* partition = b.FindPartition(t.name, p.index);
      if (partition == nullptr ||
          LeadershipError(b, t.name, p.index) != ErrorCode::kNone)
        continue;
      std::optional<protocol::RecordBatchHeader> first =
          OpeningTransactionalBatch(b, request, *partition,
                                    p.records.Contiguous());
      if (!first) continue;
      if (out.partitions.empty()) {
        out.producer_id = first->producer_id;
        out.producer_epoch = first->producer_epoch;
      }
      out.partitions.emplace_back(t.name, p.index);
    }
  }
  return out;
}

void ProduceVerified(BrokerState& b, const RequestHeader& h,
                     protocol::ProduceRequest& request,
                     const SharedBuffer& frame, Responder r,
                     const VerifiedPartitions* verified);

// Kafka's first check: transactional records need WRITE on the request's
// transactional id, else the whole request fails.
bool TransactionalWriteDenied(BrokerState& b,
                              const protocol::ProduceRequest& request,
                              const Responder& r) {
  if (b.authorizer() == nullptr || !request.transactional_id.has_value() ||
      Allowed(b, r, AclOperation::kWrite, AclResourceType::kTransactionalId,
              *request.transactional_id))
    return false;
  for (const auto& t : request.topics) {
    for (const auto& p : t.partitions) {
      if (protocol::FirstBatchIsTransactional(p.records.Contiguous()))
        return true;
    }
  }
  return false;
}

}  // namespace

void HandleProduce(BrokerState& b, const RequestHeader& h,
                   protocol::ProduceRequest& request, const SharedBuffer& frame,
                   Responder r) {
  RemoteVerification remote = TransactionalWriteDenied(b, request, r)
                                  ? RemoteVerification()
                                  : NeedsRemoteVerification(b, request);
  if (remote.partitions.empty())
    return ProduceVerified(b, h, request, frame, std::move(r), nullptr);
  // The request waits for the coordinator's answer, then runs every check
  // again (the leadership may have moved meanwhile). Its record sets point
  // into `frame`, which the callback keeps.
  const std::string transactional_id = *request.transactional_id;
  VerifyWithCoordinator(
      b, transactional_id, remote.producer_id, remote.producer_epoch,
      remote.partitions,
      [&b, h, request = std::move(request), frame,
       r = std::move(r)](VerifiedPartitions verified) mutable {
        ProduceVerified(b, h, request, frame, std::move(r), &verified);
      });
}

namespace {

void ProduceVerified(BrokerState& b, const RequestHeader& h,
                     protocol::ProduceRequest& request,
                     const SharedBuffer& frame, Responder r,
                     const VerifiedPartitions* verified) {
  ProduceResponse response;
  // (topic, partition) positions in the response of the partitions that
  // appended something.
  std::vector<std::pair<size_t, size_t>> appended;
  // For acks=all: the log end each appended partition reached (parallel to
  // `appended`).
  std::vector<int64_t> required;
  std::vector<std::string> topic_names;
  bool valid_acks =
      request.acks == 0 || request.acks == 1 || request.acks == -1;
  // Kafka's KafkaApis.handleProduceRequest (3.x) refuses the whole request
  // when a partition's first batch is transactional and the request names no
  // transactional id: nothing is appended, every partition gets the error.
  bool unauthorized_txn = false;
  if (!request.transactional_id.has_value()) {
    for (const auto& t : request.topics) {
      for (const auto& p : t.partitions) {
        unauthorized_txn |=
            protocol::FirstBatchIsTransactional(p.records.Contiguous());
      }
    }
  } else {
    unauthorized_txn = TransactionalWriteDenied(b, request, r);
  }
  for (auto& t : request.topics) {
    topic_names.push_back(t.name);
    ProduceResponse::Topic& rt = response.topics.emplace_back();
    rt.name = t.name;
    Topic* topic = b.topics().Find(t.name);
    const bool may_write =
        Allowed(b, r, AclOperation::kWrite, AclResourceType::kTopic, t.name);
    for (auto& p : t.partitions) {
      ProduceResponse::Partition& rp = rt.partitions.emplace_back();
      rp.index = p.index;
      auto fail = [&](ErrorCode code, std::string message) {
        rp.error_code = static_cast<int16_t>(code);
        rp.error_message = std::move(message);
      };
      if (unauthorized_txn) {
        fail(ErrorCode::kTransactionalIdAuthorizationFailed,
             request.transactional_id.has_value()
                 ? absl::StrCat("no WRITE on transactional id ",
                                *request.transactional_id)
                 : "transactional records in a request without a "
                   "transactional id");
        continue;
      }
      if (auto injected = b.faults().TakeError(h.api_key, &t.name, p.index)) {
        fail(static_cast<ErrorCode>(*injected), "injected fault");
        continue;
      }
      if (!may_write) {
        fail(ErrorCode::kTopicAuthorizationFailed,
             absl::StrCat("no WRITE on topic ", t.name));
        continue;
      }
      // Only the coordinators write their own topics (Kafka's
      // internalTopicsAllowed is for them alone).
      if (IsInternalTopic(t.name)) {
        fail(ErrorCode::kInvalidTopicException,
             absl::StrCat("Cannot append to internal topic ", t.name));
        continue;
      }
      Partition* partition =
          topic == nullptr ? nullptr : topic->partition(p.index);
      if (partition == nullptr) {
        fail(ErrorCode::kUnknownTopicOrPartition,
             absl::StrCat("no partition ", t.name, "[", p.index, "]"));
        continue;
      }
      if (h.api_version >= 3 && request.transactional_id.has_value() &&
          request.transactional_id->empty()) {
        fail(ErrorCode::kInvalidRequest, "empty transactional id");
        continue;
      }
      // Kafka checks the request's records per partition before the acks,
      // which only the partitions that pass are refused for.
      protocol::ProduceRecordsCheck records =
          protocol::CheckProduceRecords(h.api_version, p.records.Contiguous());
      if (!records.ok()) {
        fail(records.error, std::move(records.message));
        continue;
      }
      if (!valid_acks) {
        fail(ErrorCode::kInvalidRequiredAcks,
             absl::StrCat("acks=", request.acks));
        continue;
      }
      if (p.records.slices.size() > 1) {
        fail(ErrorCode::kCorruptMessage, "records in more than one piece");
        continue;
      }
      if (ErrorCode leadership = LeadershipError(b, t.name, p.index);
          leadership != ErrorCode::kNone) {
        fail(leadership, absl::StrCat("broker ", b.options().node_id,
                                      " does not lead ", t.name, "-", p.index));
        continue;
      }
      if (request.acks == -1) {
        const size_t in_sync = InSyncReplicaCount(*partition);
        const size_t min_isr = RequiredInSyncReplicas(b, *topic, *partition);
        if (in_sync < min_isr) {
          fail(ErrorCode::kNotEnoughReplicas,
               absl::StrCat("The size of the current ISR ", in_sync,
                            " is insufficient to satisfy the min.isr "
                            "requirement of ",
                            min_isr, " for ", t.name, "-", p.index));
          continue;
        }
      }
      if (ApiError unverified =
              VerifyTransactionalBatch(b, request, *partition, t.name, p.index,
                                       p.records.Contiguous(), verified);
          !unverified.ok()) {
        fail(unverified.code, std::move(unverified.message));
        continue;
      }
      AppendOutcome outcome =
          AppendRecords(b, *partition, *topic, frame, p.records.Contiguous());
      if (!outcome.error.ok()) {
        fail(outcome.error.code, outcome.error.message);
        for (auto& [index, why] : outcome.record_errors)
          rp.record_errors.push_back({index, std::move(why), {}});
        continue;
      }
      rp.base_offset = outcome.base_offset;
      rp.log_append_time_ms = outcome.log_append_time;
      rp.log_start_offset = partition->log().log_start_offset();
      appended.emplace_back(response.topics.size() - 1,
                            rt.partitions.size() - 1);
      required.push_back(partition->log().log_end_offset());
    }
  }
  const Faults::ResponseDrop drop_response =
      b.faults().TakeDropProduceResponse(topic_names);
  b.commits().AfterCommit([&b, appended = std::move(appended),
                           required = std::move(required),
                           response = std::move(response), r = std::move(r),
                           drop_response, acks = request.acks,
                           timeout_ms = request.timeout_ms](
                              const absl::Status& status) mutable {
    std::vector<DelayedProduce::Wait> waits;
    std::vector<size_t> waiting;  // index into `appended` of each wait
    for (size_t i = 0; i < appended.size(); ++i) {
      auto [t, p] = appended[i];
      ProduceResponse::Topic& rt = response.topics[t];
      ProduceResponse::Partition& rp = rt.partitions[p];
      if (!status.ok()) {
        rp.error_code = static_cast<int16_t>(ErrorCode::kKafkaStorageError);
        rp.error_message = std::string(status.message());
        rp.base_offset = -1;
      } else if (Partition* partition = b.FindPartition(rt.name, rp.index)) {
        PublishAppends(b, *partition);
        if (acks == -1 && NeedsReplicaAcks(*partition)) {
          waits.push_back({rt.name, rp.index, required[i]});
          waiting.push_back(i);
        }
      }
    }
    auto answer = [drop_response, acks](ProduceResponse& response,
                                        Responder& r) {
      std::string refused;  // acks=0: the first partition's error
      for (const auto& t : response.topics) {
        for (const auto& p : t.partitions) {
          if (p.error_code != 0 && refused.empty()) {
            refused = absl::StrCat(
                t.name, "-", p.index, ": ",
                std::string(protocol::ErrorCodeName(p.error_code)));
          }
        }
      }
      if (drop_response == Faults::ResponseDrop::kCloseConnection) {
        r.CloseConnection(
            "injected fault: produce response dropped after the append");
      } else if (acks == 0 && !refused.empty()) {
        // No response carries the error: Kafka closes the connection, so
        // that the producer refreshes its metadata and reconnects.
        r.CloseConnection(
            absl::StrCat("acks=0 produce refused (", refused, ")"));
      } else if (drop_response == Faults::ResponseDrop::kKeepConnectionOpen ||
                 acks == 0) {
        // The response is never sent; later ones on the connection are.
        r.SendNothing();
      } else {
        r.Send(response);
      }
    };
    if (waits.empty()) return answer(response, r);
    // acks=all with followers: the answer waits for the ISR.
    auto delayed = std::make_shared<DelayedProduce>(
        b, std::move(waits), timeout_ms,
        [appended, waiting = std::move(waiting), answer,
         response = std::move(response), r = std::move(r)](
            const std::vector<DelayedProduce::Wait>& outcome) mutable {
          for (size_t i = 0; i < outcome.size(); ++i) {
            if (outcome[i].outcome == ErrorCode::kNone) continue;
            auto [t, p] = appended[waiting[i]];
            ProduceResponse::Partition& rp = response.topics[t].partitions[p];
            rp.error_code = static_cast<int16_t>(outcome[i].outcome);
            rp.error_message =
                std::string(protocol::ErrorCodeName(outcome[i].outcome));
            if (outcome[i].outcome != ErrorCode::kNotEnoughReplicasAfterAppend)
              rp.base_offset = -1;
          }
          answer(response, r);
        });
    delayed->Start();
  });
  // Appends and retention change what the frame chunks keep.
  b.ReleaseSparseFrames();
}

}  // namespace

}  // namespace exactly::broker
