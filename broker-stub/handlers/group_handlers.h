// The group APIs' handlers, one file each (find_coordinator.cc,
// join_group.cc, ...): they turn a decoded request into calls on the group
// coordinator (group/group_coordinator.h) and answer through the Responder,
// some of them later (a JoinGroup waits for the rebalance, a SyncGroup for the
// leader's assignment, commits for the store). group_apis.cc lists them with
// the versions this broker advertises.
#ifndef EXACTLY_BROKER_HANDLERS_GROUP_HANDLERS_H_
#define EXACTLY_BROKER_HANDLERS_GROUP_HANDLERS_H_

#include <optional>
#include <string>

#include "cluster/broker_state.h"
#include "cluster/coordinator_placement.h"
#include "handlers/authorize.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"
#include "server/responder.h"

namespace exactly::broker {

using protocol::RequestHeader;

void HandleFindCoordinator(BrokerState& b, const RequestHeader& h,
                           protocol::FindCoordinatorRequest& request,
                           Responder r);
void HandleJoinGroup(BrokerState& b, const RequestHeader& h,
                     protocol::JoinGroupRequest& request, Responder r);
void HandleSyncGroup(BrokerState& b, const RequestHeader& h,
                     protocol::SyncGroupRequest& request, Responder r);
void HandleHeartbeat(BrokerState& b, const RequestHeader& h,
                     protocol::HeartbeatRequest& request, Responder r);
void HandleLeaveGroup(BrokerState& b, const RequestHeader& h,
                      protocol::LeaveGroupRequest& request, Responder r);
void HandleOffsetCommit(BrokerState& b, const RequestHeader& h,
                        protocol::OffsetCommitRequest& request, Responder r);
void HandleOffsetFetch(BrokerState& b, const RequestHeader& h,
                       protocol::OffsetFetchRequest& request, Responder r);
void HandleDescribeGroups(BrokerState& b, const RequestHeader& h,
                          protocol::DescribeGroupsRequest& request,
                          Responder r);
void HandleListGroups(BrokerState& b, const RequestHeader& h,
                      protocol::ListGroupsRequest& request, Responder r);
void HandleDeleteGroups(BrokerState& b, const RequestHeader& h,
                        protocol::DeleteGroupsRequest& request, Responder r);
void HandleOffsetDelete(BrokerState& b, const RequestHeader& h,
                        protocol::OffsetDeleteRequest& request, Responder r);
void HandleTxnOffsetCommit(BrokerState& b, const RequestHeader& h,
                           protocol::TxnOffsetCommitRequest& request,
                           Responder r);

// The int16 a response carries for `code`.
inline int16_t Code(protocol::ErrorCode code) {
  return static_cast<int16_t>(code);
}

// The client's host as Kafka's DescribeGroups shows it ("/127.0.0.1").
inline std::string ClientHost(const Responder& r) {
  std::string peer = r.peer();
  size_t colon = peer.rfind(':');
  if (colon != std::string::npos) peer.resize(colon);
  return "/" + peer;
}

// An error injected for this request (Faults::FailRequests without a topic).
inline std::optional<protocol::ErrorCode> InjectedError(
    BrokerState& b, const RequestHeader& h) {
  if (auto e = b.faults().TakeError(h.api_key)) {
    return static_cast<protocol::ErrorCode>(*e);
  }
  return std::nullopt;
}

// What a request about `group` is refused with as a whole: an injected error,
// or NOT_COORDINATOR when another broker of the cluster coordinates the group
// (the client then asks FindCoordinator again).
inline std::optional<protocol::ErrorCode> GroupRequestError(
    BrokerState& b, const RequestHeader& h, std::string_view group) {
  if (auto injected = InjectedError(b, h)) return injected;
  if (protocol::ErrorCode e =
          CoordinatorError(b, CoordinatorKind::kGroup, group);
      e != protocol::ErrorCode::kNone)
    return e;
  return std::nullopt;
}

// The same, with Kafka's check of `operation` on the group between the two
// (GROUP_AUTHORIZATION_FAILED).
inline std::optional<protocol::ErrorCode> GroupRequestError(
    BrokerState& b, const RequestHeader& h, std::string_view group,
    const Responder& r, AclOperation operation) {
  if (auto injected = InjectedError(b, h)) return injected;
  if (!Allowed(b, r, operation, AclResourceType::kGroup, group))
    return protocol::ErrorCode::kGroupAuthorizationFailed;
  if (protocol::ErrorCode e =
          CoordinatorError(b, CoordinatorKind::kGroup, group);
      e != protocol::ErrorCode::kNone)
    return e;
  return std::nullopt;
}

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_GROUP_HANDLERS_H_
