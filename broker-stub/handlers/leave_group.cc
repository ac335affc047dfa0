// LeaveGroup: members leave at once instead of waiting for their session to
// expire; the group rebalances without them. v3+ removes many members (static
// ones by instance id), each answered on its own.
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {
using protocol::ErrorCode;
}  // namespace

void HandleLeaveGroup(BrokerState& b, const RequestHeader& h,
                      protocol::LeaveGroupRequest& request, Responder r) {
  const int16_t v = h.api_version;
  protocol::LeaveGroupResponse response;
  std::vector<LeavingMember> leaving;
  if (v <= 2) {
    leaving.push_back({request.member_id, std::nullopt});
  } else {
    for (const auto& m : request.members) {
      leaving.push_back({m.member_id, m.group_instance_id});
    }
  }
  LeaveResult result;
  if (auto injected =
          GroupRequestError(b, h, request.group_id, r, AclOperation::kRead)) {
    result.error = *injected;
  } else {
    result = b.groups().LeaveGroup(request.group_id, leaving);
  }
  if (v <= 2) {
    // One member: its error is the response's.
    ErrorCode e = result.error;
    if (e == ErrorCode::kNone && !result.members.empty()) e = result.members[0];
    response.error_code = Code(e);
  } else {
    response.error_code = Code(result.error);
    for (size_t i = 0; i < result.members.size(); ++i) {
      response.members.push_back({leaving[i].member_id,
                                  leaving[i].instance_id,
                                  Code(result.members[i]),
                                  {}});
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
