// AddPartitionsToTxn: a transactional producer names the partitions it is about
// to write. v4 comes from a partition leader of the cluster: with VerifyOnly it
// asks whether its partitions are in the transaction (KIP-890 part 1; see
// txn/remote_verification.h), without adding them.
#include <memory>
#include <optional>

#include "cluster/coordinator_placement.h"
#include "handlers/authorize.h"
#include "handlers/transaction_handlers.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

namespace {

using protocol::AddPartitionsToTxnRequest;
using protocol::AddPartitionsToTxnResponse;

std::vector<AddPartitionsToTxnResponse::Topic> ToTopics(
    const TransactionCoordinator::PartitionErrors& errors) {
  std::vector<AddPartitionsToTxnResponse::Topic> topics;
  for (const auto& [tp, error] : errors) {
    if (topics.empty() || topics.back().name != tp.first)
      topics.emplace_back().name = tp.first;
    topics.back().partitions.push_back({tp.second, error.code_value(), {}});
  }
  return topics;
}

// Kafka's checks for v0-3: WRITE on the topics. One topic refused fails the
// whole request: the refused partitions say why, the others
// OPERATION_NOT_ATTEMPTED. Empty when every topic may be written.
TransactionCoordinator::PartitionErrors UnauthorizedTopics(
    const BrokerState& b, const Responder& r,
    const std::vector<std::pair<std::string, int32_t>>& partitions) {
  TransactionCoordinator::PartitionErrors errors;
  if (b.authorizer() == nullptr) return errors;
  bool any = false;
  for (const auto& tp : partitions) {
    const bool denied =
        !Allowed(b, r, AclOperation::kWrite, AclResourceType::kTopic, tp.first);
    any |= denied;
    errors.emplace_back(
        tp, Error(denied ? protocol::ErrorCode::kTopicAuthorizationFailed
                         : protocol::ErrorCode::kOperationNotAttempted));
  }
  if (!any) errors.clear();
  return errors;
}

// v4: each transaction on its own, answered together. Brokers send it, so
// Kafka asks for CLUSTER_ACTION on the cluster.
void HandleBatched(BrokerState& b, const protocol::RequestHeader& h,
                   AddPartitionsToTxnRequest& request, Responder r) {
  if (!AllowedOnCluster(b, r, AclOperation::kClusterAction)) {
    AddPartitionsToTxnResponse response;
    response.error_code =
        static_cast<int16_t>(protocol::ErrorCode::kClusterAuthorizationFailed);
    return r.Send(response);
  }
  struct Answer {
    explicit Answer(Responder responder) : r(std::move(responder)) {}
    Responder r;
    AddPartitionsToTxnResponse response;
    size_t left = 0;
  };
  auto answer = std::make_shared<Answer>(std::move(r));
  answer->left = request.transactions.size();
  answer->response.transactions.resize(request.transactions.size());
  auto settle = [answer](size_t i,
                         const TransactionCoordinator::PartitionErrors& e) {
    answer->response.transactions[i].topics = ToTopics(e);
    if (--answer->left == 0) answer->r.Send(answer->response);
  };
  if (request.transactions.empty()) return answer->r.Send(answer->response);
  const auto injected = b.faults().TakeError(h.api_key);
  for (size_t i = 0; i < request.transactions.size(); ++i) {
    const AddPartitionsToTxnRequest::Transaction& x = request.transactions[i];
    answer->response.transactions[i].transactional_id = x.transactional_id;
    std::vector<std::pair<std::string, int32_t>> partitions;
    for (const auto& t : x.topics)
      for (int32_t p : t.partitions) partitions.emplace_back(t.name, p);
    std::optional<protocol::ErrorCode> refused;
    if (injected) {
      refused = static_cast<protocol::ErrorCode>(*injected);
    } else if (auto e = CoordinatorError(b, CoordinatorKind::kTransaction,
                                         x.transactional_id);
               e != protocol::ErrorCode::kNone) {
      refused = e;
    }
    TransactionCoordinator::PartitionErrors errors;
    if (refused || x.verify_only) {
      for (const auto& tp : partitions) {
        errors.emplace_back(
            tp, refused ? Error(*refused)
                        : b.transactions().VerifyPartitionInTransaction(
                              x.transactional_id, x.producer_id,
                              x.producer_epoch, tp.first, tp.second));
      }
      settle(i, errors);
      continue;
    }
    b.transactions().AddPartitions(
        x.transactional_id, x.producer_id, x.producer_epoch, h.api_version,
        partitions,
        [settle, i](TransactionCoordinator::PartitionErrors errors) {
          settle(i, errors);
        });
  }
}

}  // namespace

void HandleAddPartitionsToTxn(BrokerState& b, const protocol::RequestHeader& h,
                              protocol::AddPartitionsToTxnRequest& request,
                              Responder r) {
  if (h.api_version >= 4) return HandleBatched(b, h, request, std::move(r));
  std::vector<std::pair<std::string, int32_t>> partitions;
  for (const auto& t : request.topics) {
    for (int32_t p : t.partitions) partitions.emplace_back(t.name, p);
  }
  const bool may_write =
      Allowed(b, r, AclOperation::kWrite, AclResourceType::kTransactionalId,
              request.transactional_id);
  TransactionCoordinator::PartitionErrors unauthorized =
      UnauthorizedTopics(b, r, partitions);
  auto answer = [r = std::move(r)](
                    TransactionCoordinator::PartitionErrors errors) mutable {
    AddPartitionsToTxnResponse response;
    response.topics = ToTopics(errors);
    r.Send(response);
  };
  std::optional<protocol::ErrorCode> refused;
  if (auto injected = b.faults().TakeError(h.api_key)) {
    refused = static_cast<protocol::ErrorCode>(*injected);
  } else if (!may_write) {
    refused = protocol::ErrorCode::kTransactionalIdAuthorizationFailed;
  } else if (!unauthorized.empty()) {
    return answer(std::move(unauthorized));
  } else if (auto e = CoordinatorError(b, CoordinatorKind::kTransaction,
                                       request.transactional_id);
             e != protocol::ErrorCode::kNone) {
    refused = e;
  }
  if (refused) {
    TransactionCoordinator::PartitionErrors errors;
    for (const auto& tp : partitions) errors.emplace_back(tp, Error(*refused));
    answer(std::move(errors));
    return;
  }
  b.transactions().AddPartitions(request.transactional_id, request.producer_id,
                                 request.producer_epoch, h.api_version,
                                 partitions, std::move(answer));
}

}  // namespace exactly::broker
