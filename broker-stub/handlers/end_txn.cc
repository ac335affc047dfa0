// EndTxn: commit or abort the producer's transaction (markers follow the
// answer).
#include "cluster/coordinator_placement.h"
#include "handlers/authorize.h"
#include "handlers/transaction_handlers.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

void HandleEndTxn(BrokerState& b, const protocol::RequestHeader& h,
                  protocol::EndTxnRequest& request, Responder r) {
  const bool may_write =
      Allowed(b, r, AclOperation::kWrite, AclResourceType::kTransactionalId,
              request.transactional_id);
  auto answer = [r = std::move(r)](ApiError error) mutable {
    protocol::EndTxnResponse response;
    response.error_code = error.code_value();
    r.Send(response);
  };
  if (auto injected = b.faults().TakeError(h.api_key)) {
    answer(Error(static_cast<protocol::ErrorCode>(*injected)));
    return;
  }
  if (!may_write) {
    answer(Error(protocol::ErrorCode::kTransactionalIdAuthorizationFailed));
    return;
  }
  if (auto e = CoordinatorError(b, CoordinatorKind::kTransaction,
                                request.transactional_id);
      e != protocol::ErrorCode::kNone) {
    answer(Error(e));
    return;
  }
  b.transactions().EndTxn(request.transactional_id, request.producer_id,
                          request.producer_epoch, h.api_version,
                          request.committed, std::move(answer));
}

}  // namespace exactly::broker
