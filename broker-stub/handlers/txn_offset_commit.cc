// TxnOffsetCommit: a transactional producer records its consumer group's
// offsets as part of its transaction. They are held, invisible to
// OffsetFetch, until the transaction coordinator writes the transaction's
// marker: commit applies them, abort drops them. v3 carries the consumer's
// generation and member id, checked as OffsetCommit checks them (KIP-447), so
// that a consumer that lost its partitions cannot commit for them.
#include <memory>

#include "cluster/coordinator_placement.h"
#include "group/group_coordinator.h"
#include "handlers/authorize.h"
#include "handlers/group_handlers.h"
#include "txn/remote_verification.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

namespace {
using protocol::ErrorCode;
using protocol::TxnOffsetCommitRequest;
using protocol::TxnOffsetCommitResponse;

// KIP-890 for offsets, as Kafka 3.6+ verifies a TxnOffsetCommit: the group's
// __consumer_offsets partition must be in the producer's ongoing transaction
// (AddOffsetsToTxn put it there), asked of the transaction coordinator, over
// the wire when that is another broker. Otherwise a TxnOffsetCommit retried
// after its transaction ended (aborted on a timeout, its producer fenced)
// would leave pending offsets that no marker clears, and the group's
// read_committed consumers would get UNSTABLE_OFFSET_COMMIT for good.
void VerifyOffsetsInTransaction(BrokerState& b,
                                const std::string& transactional_id,
                                int64_t producer_id, int16_t producer_epoch,
                                const std::string& group,
                                absl::AnyInvocable<void(ApiError)> done) {
  std::pair<std::string, int32_t> offsets_partition{
      std::string(kConsumerOffsetsTopic), CoordinatorPartition(group)};
  if (b.controller() == nullptr ||
      CoordinatorError(b, CoordinatorKind::kTransaction, transactional_id) ==
          ErrorCode::kNone) {
    return done(b.transactions().VerifyPartitionInTransaction(
        transactional_id, producer_id, producer_epoch, offsets_partition.first,
        offsets_partition.second));
  }
  VerifyWithCoordinator(
      b, transactional_id, producer_id, producer_epoch, {offsets_partition},
      [offsets_partition,
       done = std::move(done)](VerifiedPartitions verified) mutable {
        auto it = verified.find(offsets_partition);
        if (it == verified.end()) {
          return done(Error(ErrorCode::kCoordinatorNotAvailable,
                            "the transaction coordinator did not answer"));
        }
        // Kafka's mapping of a failed offsets append (the coordinator could
        // not be asked: retriable).
        if (it->second.code == ErrorCode::kNotEnoughReplicas)
          return done(
              Error(ErrorCode::kCoordinatorNotAvailable, it->second.message));
        done(it->second);
      });
}

}  // namespace

void HandleTxnOffsetCommit(BrokerState& b, const RequestHeader& h,
                           TxnOffsetCommitRequest& request, Responder r) {
  const int16_t v = h.api_version;
  std::vector<ErrorCode> errors;
  std::vector<TxnOffset> offsets;
  std::vector<size_t> staged;  // positions in `errors` of `offsets`
  const std::string request_group = request.group_id;
  const std::string request_transactional_id = request.transactional_id;
  const int64_t request_producer_id = request.producer_id;
  const int16_t request_producer_epoch = request.producer_epoch;
  std::optional<ErrorCode> request_error =
      GroupRequestError(b, h, request.group_id);
  // Kafka's checks: WRITE on the transactional id, READ on the group, then
  // READ on each topic.
  if (!request_error &&
      !Allowed(b, r, AclOperation::kWrite, AclResourceType::kTransactionalId,
               request.transactional_id)) {
    request_error = ErrorCode::kTransactionalIdAuthorizationFailed;
  }
  if (!request_error && !Allowed(b, r, AclOperation::kRead,
                                 AclResourceType::kGroup, request.group_id)) {
    request_error = ErrorCode::kGroupAuthorizationFailed;
  }
  if (!request_error && request.group_id.empty()) {
    request_error = ErrorCode::kInvalidGroupId;
  }
  if (!request_error) {
    const bool v3 = v >= 3;
    ErrorCode e = b.groups().ValidateTxnOffsetCommit(
        request.group_id, v3 ? request.generation_id : -1,
        v3 ? request.member_id : std::string(),
        v3 ? request.group_instance_id : std::nullopt);
    if (e != ErrorCode::kNone) request_error = e;
  }
  for (const TxnOffsetCommitRequest::Topic& t : request.topics) {
    for (const TxnOffsetCommitRequest::Partition& p : t.partitions) {
      ErrorCode& e = errors.emplace_back(ErrorCode::kNone);
      if (request_error) {
        e = *request_error;
      } else if (auto injected =
                     b.faults().TakeError(h.api_key, &t.name, p.index)) {
        e = static_cast<ErrorCode>(*injected);
      } else if (!Allowed(b, r, AclOperation::kRead, AclResourceType::kTopic,
                          t.name)) {
        e = ErrorCode::kTopicAuthorizationFailed;
      } else if (b.FindPartition(t.name, p.index) == nullptr) {
        e = ErrorCode::kUnknownTopicOrPartition;
      } else if (p.committed_metadata &&
                 p.committed_metadata->size() >
                     GroupCoordinator::kMaxMetadataBytes) {
        e = ErrorCode::kOffsetMetadataTooLarge;
      } else {
        offsets.push_back({t.name, p.index, p.committed_offset,
                           p.committed_metadata,
                           v >= 2 ? p.committed_leader_epoch : -1});
        staged.push_back(errors.size() - 1);
      }
    }
  }
  // Answers once the staged offsets are durable (replicated, in a cluster);
  // a failed write fails the partitions it carried.
  auto answer = [request = std::move(request), r = std::move(r),
                 errors = std::move(errors),
                 staged](ErrorCode written) mutable {
    if (written != ErrorCode::kNone) {
      for (size_t i : staged) errors[i] = written;
    }
    TxnOffsetCommitResponse response;
    size_t i = 0;
    for (const TxnOffsetCommitRequest::Topic& t : request.topics) {
      TxnOffsetCommitResponse::Topic& rt = response.topics.emplace_back();
      rt.name = t.name;
      for (const TxnOffsetCommitRequest::Partition& p : t.partitions) {
        rt.partitions.push_back({p.index, Code(errors[i++]), {}});
      }
    }
    r.Send(response);
  };
  if (offsets.empty()) return answer(ErrorCode::kNone);
  // Shared: an error answers now, or the write's outcome later.
  auto shared = std::make_shared<decltype(answer)>(std::move(answer));
  VerifyOffsetsInTransaction(
      b, request_transactional_id, request_producer_id, request_producer_epoch,
      request_group,
      [&b, shared, request_group, request_producer_id, request_producer_epoch,
       offsets = std::move(offsets)](ApiError verified) {
        if (!verified.ok()) return (*shared)(verified.code);
        ApiError e = b.groups().StageTxnOffsets(
            request_group, request_producer_id, request_producer_epoch, offsets,
            [shared](ErrorCode written) { (*shared)(written); });
        if (!e.ok()) (*shared)(e.code);
      });
}

}  // namespace exactly::broker
