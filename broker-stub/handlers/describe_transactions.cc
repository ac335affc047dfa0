// DescribeTransactions (KIP-664): the coordinator's record of each
// transactional id asked for; TRANSACTIONAL_ID_NOT_FOUND for one it does not
// know, INVALID_REQUEST for the empty id (Kafka's TransactionCoordinator).
#include <map>

#include "cluster/coordinator_placement.h"
#include "handlers/transaction_handlers.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

void HandleDescribeTransactions(BrokerState& b,
                                const protocol::RequestHeader& h,
                                protocol::DescribeTransactionsRequest& request,
                                Responder r) {
  using protocol::ErrorCode;
  protocol::DescribeTransactionsResponse response;
  for (const std::string& id : request.transactional_ids) {
    auto& t = response.transactions.emplace_back();
    t.transactional_id = id;
    const TxnMetadata* m = b.transactions().Find(id);
    if (auto injected = b.faults().TakeError(h.api_key)) {
      t.error_code = *injected;
    } else if (!Allowed(b, r, AclOperation::kDescribe,
                        AclResourceType::kTransactionalId, id)) {
      t.error_code =
          static_cast<int16_t>(ErrorCode::kTransactionalIdAuthorizationFailed);
    } else if (id.empty()) {
      t.error_code = static_cast<int16_t>(ErrorCode::kInvalidRequest);
    } else if (ErrorCode e =
                   CoordinatorError(b, CoordinatorKind::kTransaction, id);
               e != ErrorCode::kNone) {
      t.error_code = static_cast<int16_t>(e);
    } else if (m == nullptr || m->state == TxnState::kDead) {
      t.error_code = static_cast<int16_t>(ErrorCode::kTransactionalIdNotFound);
    } else {
      t.state = std::string(TxnStateName(m->state));
      t.timeout_ms = m->timeout_ms;
      t.start_time_ms = m->start_ms;
      t.producer_id = m->producer_id;
      t.producer_epoch = m->producer_epoch;
      std::map<std::string, std::vector<int32_t>> topics;
      for (const auto& [topic, index] : m->partitions) {
        topics[topic].push_back(index);
      }
      for (auto& [topic, indexes] : topics) {
        t.topics.push_back({topic, std::move(indexes), {}});
      }
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
