// AddOffsetsToTxn: a transactional producer will commit a consumer group's
// offsets in its transaction (TxnOffsetCommit follows, to the group
// coordinator).
#include "cluster/coordinator_placement.h"
#include "handlers/authorize.h"
#include "handlers/transaction_handlers.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

void HandleAddOffsetsToTxn(BrokerState& b, const protocol::RequestHeader& h,
                           protocol::AddOffsetsToTxnRequest& request,
                           Responder r) {
  // Kafka's checks: WRITE on the transactional id, READ on the group.
  const protocol::ErrorCode denied =
      !Allowed(b, r, AclOperation::kWrite, AclResourceType::kTransactionalId,
               request.transactional_id)
          ? protocol::ErrorCode::kTransactionalIdAuthorizationFailed
      : !Allowed(b, r, AclOperation::kRead, AclResourceType::kGroup,
                 request.group_id)
          ? protocol::ErrorCode::kGroupAuthorizationFailed
          : protocol::ErrorCode::kNone;
  auto answer = [r = std::move(r)](ApiError error) mutable {
    protocol::AddOffsetsToTxnResponse response;
    response.error_code = error.code_value();
    r.Send(response);
  };
  if (auto injected = b.faults().TakeError(h.api_key)) {
    answer(Error(static_cast<protocol::ErrorCode>(*injected)));
    return;
  }
  if (denied != protocol::ErrorCode::kNone) {
    answer(Error(denied));
    return;
  }
  if (auto e = CoordinatorError(b, CoordinatorKind::kTransaction,
                                request.transactional_id);
      e != protocol::ErrorCode::kNone) {
    answer(Error(e));
    return;
  }
  b.transactions().AddOffsets(request.transactional_id, request.producer_id,
                              request.producer_epoch, h.api_version,
                              request.group_id, std::move(answer));
}

}  // namespace exactly::broker
