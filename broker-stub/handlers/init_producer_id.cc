// InitProducerId: a fresh producer id for an idempotent producer. With a
// transactional id the transaction coordinator answers (one id per
// transactional id, epochs that fence zombies).
#include "cluster/coordinator_placement.h"
#include "handlers/authorize.h"
#include "handlers/handlers.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

namespace {
using protocol::ErrorCode;
}  // namespace

void HandleInitProducerId(BrokerState& b, const RequestHeader& h,
                          protocol::InitProducerIdRequest& request,
                          Responder r) {
  protocol::InitProducerIdResponse response;
  if (auto injected = b.faults().TakeError(h.api_key)) {
    response.error_code = *injected;
    r.Send(response);
    return;
  }
  // Kafka's checks: WRITE on the transactional id, or for an idempotent
  // producer IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
  if (request.transactional_id.has_value()
          ? !Allowed(b, r, AclOperation::kWrite,
                     AclResourceType::kTransactionalId,
                     *request.transactional_id)
          : !AllowedIdempotentWrite(b, r)) {
    response.error_code = static_cast<int16_t>(
        request.transactional_id.has_value()
            ? ErrorCode::kTransactionalIdAuthorizationFailed
            : ErrorCode::kClusterAuthorizationFailed);
    r.Send(response);
    return;
  }
  // KIP-360's producer id and epoch come together or not at all: Kafka refuses
  // one without the other before any coordinator looks at the request.
  if ((request.producer_id == -1) != (request.producer_epoch == -1)) {
    response.error_code = static_cast<int16_t>(ErrorCode::kInvalidRequest);
    r.Send(response);
    return;
  }
  if (request.transactional_id.has_value()) {
    if (ErrorCode e = CoordinatorError(b, CoordinatorKind::kTransaction,
                                       *request.transactional_id);
        e != ErrorCode::kNone) {
      response.error_code = static_cast<int16_t>(e);
      r.Send(response);
      return;
    }
  }
  if (request.transactional_id.has_value()) {
    b.transactions().InitProducerId(
        *request.transactional_id, request.transaction_timeout_ms,
        request.producer_id, request.producer_epoch, h.api_version,
        [r = std::move(r)](TransactionCoordinator::InitResult result) mutable {
          protocol::InitProducerIdResponse response;
          response.error_code = result.error.code_value();
          response.producer_id = result.producer_id;
          response.producer_epoch = result.producer_epoch;
          r.Send(response);
        });
    return;
  }
  // An idempotent producer always gets a new id at epoch 0, as Kafka does, even
  // when it sends its current id (KIP-360 is for transactional producers).
  response.producer_id = b.AllocateProducerId();
  if (response.producer_id < 0) {
    response.error_code =
        static_cast<int16_t>(ErrorCode::kCoordinatorLoadInProgress);
    r.Send(response);
    return;
  }
  response.producer_epoch = 0;
  b.commits().AfterCommit([response,
                           r = std::move(r)](const absl::Status& s) mutable {
    if (!s.ok()) {
      response.error_code = static_cast<int16_t>(ErrorCode::kKafkaStorageError);
      response.producer_id = -1;
      response.producer_epoch = -1;
    }
    r.Send(response);
  });
}

}  // namespace exactly::broker
