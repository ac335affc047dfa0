// JoinGroup: a member joins (or rejoins) a group; the answer waits until the
// rebalance completes (see group/group.h). A new member of v4+ first gets
// MEMBER_ID_REQUIRED with its id (KIP-394).
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {

protocol::JoinGroupResponse ToResponse(JoinResult result) {
  protocol::JoinGroupResponse response;
  response.error_code = Code(result.error);
  response.generation_id = result.generation_id;
  response.protocol_type = std::move(result.protocol_type);
  response.protocol_name = std::move(result.protocol_name);
  response.leader = std::move(result.leader);
  response.skip_assignment = result.skip_assignment;
  response.member_id = std::move(result.member_id);
  for (JoinResult::Member& m : result.members) {
    response.members.push_back({std::move(m.member_id),
                                std::move(m.group_instance_id),
                                std::move(m.metadata),
                                {}});
  }
  return response;
}

}  // namespace

void HandleJoinGroup(BrokerState& b, const RequestHeader& h,
                     protocol::JoinGroupRequest& request, Responder r) {
  const int16_t v = h.api_version;
  if (auto injected =
          GroupRequestError(b, h, request.group_id, r, AclOperation::kRead)) {
    r.Send(ToResponse(JoinResult::Error(*injected, request.member_id)));
    return;
  }
  JoinArgs args;
  args.member_id = std::move(request.member_id);
  if (v >= 5) args.instance_id = std::move(request.group_instance_id);
  args.client_id = h.client_id.value_or("");
  args.client_host = ClientHost(r);
  args.session_timeout_ms = request.session_timeout_ms;
  // v0 has no rebalance timeout: the session timeout serves for both.
  args.rebalance_timeout_ms =
      v >= 1 ? request.rebalance_timeout_ms : request.session_timeout_ms;
  args.protocol_type = std::move(request.protocol_type);
  for (auto& p : request.protocols) {
    args.protocols.push_back({std::move(p.name), std::move(p.metadata)});
  }
  args.require_known_member_id = v >= 4;
  args.supports_skip_assignment = v >= 9;
  b.groups().JoinGroup(request.group_id, std::move(args),
                       [r = std::move(r)](JoinResult result) mutable {
                         r.Send(ToResponse(std::move(result)));
                       });
}

}  // namespace exactly::broker
