// TxnOffsetCommit: a transactional producer records its consumer group's
// offsets as part of its transaction. They are held, invisible to
// OffsetFetch, until the transaction coordinator writes the transaction's
// marker: commit applies them, abort drops them. v3 carries the consumer's
// generation and member id, checked as OffsetCommit checks them (KIP-447), so
// that a consumer that lost its partitions cannot commit for them.
#include <memory>

#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {
using protocol::ErrorCode;
using protocol::TxnOffsetCommitRequest;
using protocol::TxnOffsetCommitResponse;
}  // namespace

void HandleTxnOffsetCommit(BrokerState& b, const RequestHeader& h,
                           TxnOffsetCommitRequest& request, Responder r) {
  const int16_t v = h.api_version;
  std::vector<ErrorCode> errors;
  std::vector<TxnOffset> offsets;
  std::vector<size_t> staged;  // positions in `errors` of `offsets`
  const std::string request_group = request.group_id;
  const int64_t request_producer_id = request.producer_id;
  const int16_t request_producer_epoch = request.producer_epoch;
  std::optional<ErrorCode> request_error =
      GroupRequestError(b, h, request.group_id);
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
  // Shared: the check's error answers now, or the write's outcome later.
  auto shared = std::make_shared<decltype(answer)>(std::move(answer));
  ApiError e = b.groups().StageTxnOffsets(
      request_group, request_producer_id, request_producer_epoch, offsets,
      [shared](ErrorCode written) { (*shared)(written); });
  if (!e.ok()) (*shared)(e.code);
}

}  // namespace exactly::broker
