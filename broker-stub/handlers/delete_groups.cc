// DeleteGroups: removes empty groups and their committed offsets
// (NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for unknown
// ones). Answered once the deletion is durable.
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {
using protocol::ErrorCode;
}  // namespace

void HandleDeleteGroups(BrokerState& b, const RequestHeader& h,
                        protocol::DeleteGroupsRequest& request, Responder r) {
  // Injected errors first; the rest goes to the coordinator.
  std::vector<std::optional<ErrorCode>> injected;
  std::vector<std::string> to_delete;
  for (const std::string& id : request.group_names) {
    injected.push_back(GroupRequestError(b, h, id, r, AclOperation::kDelete));
    if (!injected.back()) to_delete.push_back(id);
  }
  b.groups().DeleteGroups(
      to_delete,
      [names = std::move(request.group_names), injected = std::move(injected),
       r = std::move(r)](std::vector<ErrorCode> errors) mutable {
        protocol::DeleteGroupsResponse response;
        size_t next = 0;
        for (size_t i = 0; i < names.size(); ++i) {
          ErrorCode e = injected[i] ? *injected[i] : errors[next++];
          response.results.push_back({names[i], Code(e), {}});
        }
        r.Send(response);
      });
}

}  // namespace exactly::broker
