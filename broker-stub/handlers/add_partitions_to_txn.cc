// AddPartitionsToTxn: a transactional producer names the partitions it is about
// to write.
#include "handlers/transaction_handlers.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

void HandleAddPartitionsToTxn(BrokerState& b, const protocol::RequestHeader& h,
                              protocol::AddPartitionsToTxnRequest& request,
                              Responder r) {
  std::vector<std::pair<std::string, int32_t>> partitions;
  for (const auto& t : request.topics) {
    for (int32_t p : t.partitions) partitions.emplace_back(t.name, p);
  }
  auto answer = [r = std::move(r)](
                    TransactionCoordinator::PartitionErrors errors) mutable {
    protocol::AddPartitionsToTxnResponse response;
    for (const auto& [tp, error] : errors) {
      if (response.topics.empty() || response.topics.back().name != tp.first) {
        response.topics.emplace_back().name = tp.first;
      }
      response.topics.back().partitions.push_back(
          {tp.second, error.code_value(), {}});
    }
    r.Send(response);
  };
  if (auto injected = b.faults().TakeError(h.api_key)) {
    TransactionCoordinator::PartitionErrors errors;
    for (const auto& tp : partitions) {
      errors.emplace_back(tp,
                          Error(static_cast<protocol::ErrorCode>(*injected)));
    }
    answer(std::move(errors));
    return;
  }
  b.transactions().AddPartitions(request.transactional_id, request.producer_id,
                                 request.producer_epoch, h.api_version,
                                 partitions, std::move(answer));
}

}  // namespace exactly::broker
