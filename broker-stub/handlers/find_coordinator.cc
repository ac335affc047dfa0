// FindCoordinator: the broker that coordinates a group or a transactional id
// (key types 0 and 1; cluster/coordinator_placement.h), the same from every
// broker; v4 asks about many keys at once. In a cluster, the first question
// about a transactional id creates __transaction_state, as Kafka does.
#include "absl/strings/str_cat.h"
#include "cluster/coordinator_placement.h"
#include "handlers/authorize.h"
#include "handlers/group_handlers.h"
#include "txn/transaction_log.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::FindCoordinatorResponse;

FindCoordinatorResponse::Coordinator Answer(BrokerState& b,
                                            const RequestHeader& h,
                                            int8_t key_type,
                                            const std::string& key,
                                            const Responder& r) {
  const std::string_view listener = r.listener();
  FindCoordinatorResponse::Coordinator c;
  c.key = key;
  auto fail = [&](ErrorCode code, std::string message) {
    c.error_code = Code(code);
    c.error_message = std::move(message);
    c.node_id = -1;
    c.port = -1;
  };
  if (auto injected = InjectedError(b, h)) {
    fail(*injected, "injected fault");
  } else if (key_type != protocol::kCoordinatorKeyGroup &&
             key_type != protocol::kCoordinatorKeyTransaction) {
    fail(ErrorCode::kInvalidRequest,
         absl::StrCat("unknown coordinator key type ", key_type));
  } else if (key_type == protocol::kCoordinatorKeyGroup &&
             !Allowed(b, r, AclOperation::kDescribe, AclResourceType::kGroup,
                      key)) {
    // Kafka's checks: DESCRIBE on the group or the transactional id.
    fail(ErrorCode::kGroupAuthorizationFailed,
         absl::StrCat("no DESCRIBE on group ", key));
  } else if (key_type == protocol::kCoordinatorKeyTransaction &&
             !Allowed(b, r, AclOperation::kDescribe,
                      AclResourceType::kTransactionalId, key)) {
    fail(ErrorCode::kTransactionalIdAuthorizationFailed,
         absl::StrCat("no DESCRIBE on transactional id ", key));
  } else if (const CoordinatorKind kind =
                 key_type == protocol::kCoordinatorKeyGroup
                     ? CoordinatorKind::kGroup
                     : CoordinatorKind::kTransaction;
             !EnsureCoordinatorTopic(b, kind).ok()) {
    fail(ErrorCode::kCoordinatorNotAvailable,
         absl::StrCat(std::string(CoordinatorTopic(kind)),
                      " cannot be created now"));
  } else if (CoordinatorAddress a = FindCoordinatorOf(b, kind, key, listener);
             a.fenced) {
    // Kafka's answer while the coordinator's partition has no leader.
    fail(ErrorCode::kCoordinatorNotAvailable,
         absl::StrCat("the coordinator of '", key, "' (broker ", a.node_id,
                      ") is not available"));
  } else {
    c.node_id = a.node_id;
    c.host = std::move(a.host);
    c.port = a.port;
  }
  return c;
}

}  // namespace

void HandleFindCoordinator(BrokerState& b, const RequestHeader& h,
                           protocol::FindCoordinatorRequest& request,
                           Responder r) {
  FindCoordinatorResponse response;
  const int8_t key_type =
      h.api_version >= 1 ? request.key_type : protocol::kCoordinatorKeyGroup;
  if (h.api_version >= 4) {
    for (const std::string& key : request.coordinator_keys) {
      response.coordinators.push_back(Answer(b, h, key_type, key, r));
    }
  } else {
    FindCoordinatorResponse::Coordinator c =
        Answer(b, h, key_type, request.key, r);
    response.error_code = c.error_code;
    response.error_message = std::move(c.error_message);
    response.node_id = c.node_id;
    response.host = std::move(c.host);
    response.port = c.port;
  }
  r.Send(response);
}

}  // namespace exactly::broker
