#include "txn/remote_verification.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "cluster/coordinator_placement.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "txn/transaction_coordinator.h"

namespace exactly::broker {

namespace {

using protocol::AddPartitionsToTxnRequest;
using protocol::AddPartitionsToTxnResponse;
using protocol::ErrorCode;

constexpr int16_t kVerifyVersion = 4;

// What the producer is told when the coordinator could not answer: a
// retriable error, as Kafka answers.
ApiError Unverified(std::string why) {
  return Error(ErrorCode::kNotEnoughReplicas,
               absl::StrCat("could not verify the transaction with its "
                            "coordinator: ",
                            why));
}

bool IsCoordinatorError(ErrorCode e) {
  return e == ErrorCode::kNotCoordinator ||
         e == ErrorCode::kCoordinatorNotAvailable ||
         e == ErrorCode::kCoordinatorLoadInProgress;
}

}  // namespace

void VerifyWithCoordinator(
    BrokerState& b, const std::string& transactional_id, int64_t producer_id,
    int16_t producer_epoch,
    const std::vector<std::pair<std::string, int32_t>>& partitions,
    absl::AnyInvocable<void(VerifiedPartitions)> done) {
  auto fail_all = [partitions](std::string why) {
    VerifiedPartitions out;
    for (const auto& tp : partitions) out[tp] = Unverified(why);
    return out;
  };
  CoordinatorAddress coordinator =
      FindCoordinatorOf(b, CoordinatorKind::kTransaction, transactional_id);
  if (coordinator.fenced) {
    return done(fail_all(
        absl::StrCat("broker ", coordinator.node_id, " is not available")));
  }
  AddPartitionsToTxnRequest request;
  AddPartitionsToTxnRequest::Transaction& x =
      request.transactions.emplace_back();
  x.transactional_id = transactional_id;
  x.producer_id = producer_id;
  x.producer_epoch = producer_epoch;
  x.verify_only = true;
  for (const auto& [topic, index] : partitions) {
    if (x.topics.empty() || x.topics.back().name != topic)
      x.topics.emplace_back().name = topic;
    x.topics.back().partitions.push_back(index);
  }
  const BrokerInfo info{.node_id = coordinator.node_id,
                        .host = coordinator.host,
                        .port = coordinator.port};
  b.transactions()
      .peers()
      .Get(info)
      .Send<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse>(
          kVerifyVersion, request,
          [fail_all, done = std::make_shared<decltype(done)>(std::move(done))](
              absl::StatusOr<AddPartitionsToTxnResponse> response,
              SharedBuffer) {
            if (!response.ok())
              return (*done)(
                  fail_all(std::string(response.status().message())));
            VerifiedPartitions out =
                fail_all("the coordinator did not answer for it");
            if (response->error_code != 0) {
              return (*done)(fail_all(
                  std::string(protocol::ErrorCodeName(response->error_code))));
            }
            for (const auto& rx : response->transactions) {
              for (const auto& rt : rx.topics) {
                for (const auto& rp : rt.partitions) {
                  auto it = out.find({rt.name, rp.index});
                  if (it == out.end()) continue;
                  const auto e = static_cast<ErrorCode>(rp.error_code);
                  if (IsCoordinatorError(e)) {
                    it->second =
                        Unverified(std::string(protocol::ErrorCodeName(e)));
                  } else if (e == ErrorCode::kNone) {
                    it->second = ApiError{};
                  } else {
                    it->second = Error(
                        e,
                        absl::StrCat(rt.name, "[", rp.index,
                                     "] is not in an ongoing transaction "
                                     "of '",
                                     rx.transactional_id,
                                     "' (transaction.partition."
                                     "verification, KIP-890): ",
                                     std::string(protocol::ErrorCodeName(e))));
                  }
                }
              }
            }
            (*done)(std::move(out));
          });
}

}  // namespace exactly::broker
