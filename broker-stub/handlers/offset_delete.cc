// OffsetDelete: removes a group's committed offsets for some partitions;
// refused (GROUP_SUBSCRIBED_TO_TOPIC) for topics a member of the group still
// consumes (KIP-496).
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {
using protocol::ErrorCode;
using protocol::OffsetDeleteRequest;
using protocol::OffsetDeleteResponse;
}  // namespace

void HandleOffsetDelete(BrokerState& b, const RequestHeader& h,
                        OffsetDeleteRequest& request, Responder r) {
  if (auto injected =
          GroupRequestError(b, h, request.group_id, r, AclOperation::kDelete)) {
    OffsetDeleteResponse response;
    response.error_code = Code(*injected);
    r.Send(response);
    return;
  }
  std::vector<GroupCoordinator::OffsetDeleteItem> items;
  for (const OffsetDeleteRequest::Topic& t : request.topics) {
    for (const OffsetDeleteRequest::Partition& p : t.partitions) {
      GroupCoordinator::OffsetDeleteItem& item = items.emplace_back();
      item.topic = t.name;
      item.partition = p.index;
      if (auto e = b.faults().TakeError(h.api_key, &t.name, p.index)) {
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
  b.groups().DeleteOffsets(
      group_id, std::move(items),
      [request = std::move(request), r = std::move(r)](
          ErrorCode error,
          std::vector<GroupCoordinator::OffsetDeleteItem> items) mutable {
        OffsetDeleteResponse response;
        response.error_code = Code(error);
        if (error == ErrorCode::kNone) {
          size_t i = 0;
          for (const OffsetDeleteRequest::Topic& t : request.topics) {
            OffsetDeleteResponse::Topic& rt = response.topics.emplace_back();
            rt.name = t.name;
            for (const OffsetDeleteRequest::Partition& p : t.partitions) {
              rt.partitions.push_back({p.index, Code(items[i++].error), {}});
            }
          }
        }
        r.Send(response);
      });
}

}  // namespace exactly::broker
