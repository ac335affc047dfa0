// SyncGroup: every member asks for its assignment; the leader brings them
// all. Followers' answers wait for the leader's, which waits for the store.
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

protocol::SyncGroupResponse ToResponse(SyncResult result) {
  protocol::SyncGroupResponse response;
  response.error_code = Code(result.error);
  response.protocol_type = std::move(result.protocol_type);
  response.protocol_name = std::move(result.protocol_name);
  response.assignment = std::move(result.assignment);
  return response;
}

}  // namespace

void HandleSyncGroup(BrokerState& b, const RequestHeader& h,
                     protocol::SyncGroupRequest& request, Responder r) {
  const int16_t v = h.api_version;
  if (auto injected =
          GroupRequestError(b, h, request.group_id, r, AclOperation::kRead)) {
    r.Send(ToResponse(SyncResult::Error(*injected)));
    return;
  }
  // v5+ must name the protocol type and name, which are checked against the
  // group's (KIP-559).
  if (v >= 5 && (!request.protocol_type || !request.protocol_name)) {
    r.Send(
        ToResponse(SyncResult::Error(ErrorCode::kInconsistentGroupProtocol)));
    return;
  }
  SyncArgs args;
  args.generation = request.generation_id;
  args.member_id = std::move(request.member_id);
  if (v >= 3) args.instance_id = std::move(request.group_instance_id);
  if (v >= 5) {
    args.protocol_type = std::move(request.protocol_type);
    args.protocol_name = std::move(request.protocol_name);
  }
  for (auto& a : request.assignments) {
    args.assignments[a.member_id] = std::move(a.assignment);
  }
  b.groups().SyncGroup(request.group_id, std::move(args),
                       [r = std::move(r)](SyncResult result) mutable {
                         r.Send(ToResponse(std::move(result)));
                       });
}

}  // namespace exactly::broker
