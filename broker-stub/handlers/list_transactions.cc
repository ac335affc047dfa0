// ListTransactions (KIP-664): the transactional ids the coordinator knows,
// filtered as Kafka's TransactionStateManager filters them (by state name,
// producer id and, from v1, how long the transaction has run).
#include <set>

#include "handlers/transaction_handlers.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

namespace {

constexpr TxnState kAllStates[] = {
    TxnState::kEmpty,          TxnState::kOngoing,
    TxnState::kPrepareCommit,  TxnState::kPrepareAbort,
    TxnState::kCompleteCommit, TxnState::kCompleteAbort,
    TxnState::kDead,           TxnState::kPrepareEpochFence};

}  // namespace

void HandleListTransactions(BrokerState& b, const protocol::RequestHeader& h,
                            protocol::ListTransactionsRequest& request,
                            Responder r) {
  protocol::ListTransactionsResponse response;
  if (auto injected = b.faults().TakeError(h.api_key)) {
    response.error_code = *injected;
    r.Send(response);
    return;
  }
  std::set<TxnState> states;
  for (const std::string& name : request.state_filters) {
    bool known = false;
    for (TxnState s : kAllStates) {
      if (TxnStateName(s) == name) {
        states.insert(s);
        known = true;
      }
    }
    if (!known) response.unknown_state_filters.push_back(name);
  }
  const std::set<int64_t> producer_ids(request.producer_id_filters.begin(),
                                       request.producer_id_filters.end());
  const int64_t now = b.NowMs();
  for (const auto& [id, m] : b.transactions().all()) {
    // Dead ids are being expired (Kafka hides them too).
    if (m.state == TxnState::kDead) continue;
    if (!producer_ids.empty() && !producer_ids.contains(m.producer_id))
      continue;
    // Only unknown names asked for: nothing matches, as in Kafka.
    if (!request.state_filters.empty() && !states.contains(m.state)) continue;
    if (request.duration_filter >= 0 &&
        now - m.start_ms <= request.duration_filter)
      continue;
    // Kafka lists the ids the client may DESCRIBE.
    if (!Allowed(b, r, AclOperation::kDescribe,
                 AclResourceType::kTransactionalId, id))
      continue;
    response.transactions.push_back(
        {id, m.producer_id, std::string(TxnStateName(m.state)), {}});
  }
  r.Send(response);
}

}  // namespace exactly::broker
