// What the transaction coordinator knows about one transactional.id: its
// producer id and epoch, where its current transaction stands, and which
// partitions and consumer groups the transaction has touched. This is the
// record the coordinator persists ('X' keys).
//
// States and the transitions allowed into each (Kafka's TransactionState):
//
//   Empty             <- Empty, CompleteCommit, CompleteAbort (InitProducerId)
//   Ongoing           <- Empty, Ongoing, CompleteCommit, CompleteAbort
//   (AddPartitions/Offsets) PrepareCommit     <- Ongoing (EndTxn commit)
//   PrepareAbort      <- Ongoing, PrepareEpochFence                (EndTxn
//   abort, timeout) CompleteCommit    <- PrepareCommit (markers written)
//   CompleteAbort     <- PrepareAbort                              (markers
//   written) PrepareEpochFence <- Ongoing                                   (a
//   new instance, a timeout) Dead              <- Empty, CompleteCommit,
//   CompleteAbort      (expiry)
#ifndef EXACTLY_BROKER_TXN_TRANSACTION_METADATA_H_
#define EXACTLY_BROKER_TXN_TRANSACTION_METADATA_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace exactly::broker {

enum class TxnState : int8_t {
  kEmpty = 0,
  kOngoing = 1,
  kPrepareCommit = 2,
  kPrepareAbort = 3,
  kCompleteCommit = 4,
  kCompleteAbort = 5,
  kDead = 6,
  kPrepareEpochFence = 7,
};

std::string_view TxnStateName(TxnState state);

// Whether `to` may follow `from` (the table above).
bool IsValidTransition(TxnState from, TxnState to);

struct TxnMetadata {
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  // The epoch a KIP-360 bump (InitProducerId with the current id and epoch)
  // moved from: a retry that carries it gets the current epoch back instead of
  // being fenced. -1 after a new instance's InitProducerId or a fence, as
  // Kafka's lastProducerEpoch.
  int16_t last_producer_epoch = -1;
  int32_t timeout_ms = 0;
  TxnState state = TxnState::kEmpty;
  std::set<std::pair<std::string, int32_t>> partitions;  // topic, partition
  std::set<std::string> groups;  // consumer groups with offsets
  int64_t start_ms = -1;         // when the current transaction began (Ongoing)
  int64_t last_update_ms = -1;

  bool InPrepare() const {
    return state == TxnState::kPrepareCommit ||
           state == TxnState::kPrepareAbort ||
           state == TxnState::kPrepareEpochFence;
  }
  bool InComplete() const {
    return state == TxnState::kCompleteCommit ||
           state == TxnState::kCompleteAbort;
  }
};

std::string SerializeTxnMetadata(const TxnMetadata& m);
absl::StatusOr<TxnMetadata> DeserializeTxnMetadata(
    std::string_view transactional_id, std::string_view bytes);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_TXN_TRANSACTION_METADATA_H_
