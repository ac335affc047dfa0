// OffsetCommit: a group member (or, for an empty group, anyone) records how
// far it consumed. Answered once the offsets are durable.
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {
using protocol::ErrorCode;
using protocol::OffsetCommitRequest;
using protocol::OffsetCommitResponse;
}  // namespace

void HandleOffsetCommit(BrokerState& b, const RequestHeader& h,
                        OffsetCommitRequest& request, Responder r) {
  const int16_t v = h.api_version;
  std::optional<ErrorCode> request_error =
      GroupRequestError(b, h, request.group_id, r, AclOperation::kRead);
  std::vector<OffsetCommitItem> items;
  for (const OffsetCommitRequest::Topic& t : request.topics) {
    for (const OffsetCommitRequest::Partition& p : t.partitions) {
      OffsetCommitItem& item = items.emplace_back();
      item.topic = t.name;
      item.partition = p.index;
      item.offset = p.committed_offset;
      if (v >= 6) item.leader_epoch = p.committed_leader_epoch;
      item.metadata = p.committed_metadata;
      if (request_error) {
        item.error = *request_error;
      } else if (auto e = b.faults().TakeError(h.api_key, &t.name, p.index)) {
        item.error = static_cast<ErrorCode>(*e);
      } else if (!Allowed(b, r, AclOperation::kRead, AclResourceType::kTopic,
                          t.name)) {
        item.error = ErrorCode::kTopicAuthorizationFailed;
      } else if (b.FindPartition(t.name, p.index) == nullptr) {
        item.error = ErrorCode::kUnknownTopicOrPartition;
      }
    }
  }
  const std::string group_id = request.group_id;
  const int32_t generation = v >= 1 ? request.generation_id : -1;
  const std::string member_id = v >= 1 ? request.member_id : std::string();
  std::optional<std::string> instance_id;
  if (v >= 7) instance_id = request.group_instance_id;
  // Shapes the answer like the request: topics and partitions in its order.
  auto answer = [request = std::move(request), r = std::move(r)](
                    std::vector<OffsetCommitItem> items) mutable {
    OffsetCommitResponse response;
    size_t i = 0;
    for (const OffsetCommitRequest::Topic& t : request.topics) {
      OffsetCommitResponse::Topic& rt = response.topics.emplace_back();
      rt.name = t.name;
      for (const OffsetCommitRequest::Partition& p : t.partitions) {
        rt.partitions.push_back({p.index, Code(items[i++].error), {}});
      }
    }
    r.Send(response);
  };
  if (request_error) {
    answer(std::move(items));
    return;
  }
  b.groups().CommitOffsets(group_id, generation, member_id, instance_id,
                           std::move(items), std::move(answer));
}

}  // namespace exactly::broker
