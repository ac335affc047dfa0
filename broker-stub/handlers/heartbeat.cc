// Heartbeat: keeps a member's session alive, and tells it when the group is
// rebalancing (REBALANCE_IN_PROGRESS) so that it rejoins.
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

void HandleHeartbeat(BrokerState& b, const RequestHeader& h,
                     protocol::HeartbeatRequest& request, Responder r) {
  protocol::HeartbeatResponse response;
  if (auto injected =
          GroupRequestError(b, h, request.group_id, r, AclOperation::kRead)) {
    response.error_code = Code(*injected);
  } else {
    std::optional<std::string> instance_id;
    if (h.api_version >= 3) instance_id = request.group_instance_id;
    response.error_code =
        Code(b.groups().Heartbeat(request.group_id, request.member_id,
                                  instance_id, request.generation_id));
  }
  r.Send(response);
}

}  // namespace exactly::broker
