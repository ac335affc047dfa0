// The transaction coordinator's state as records of __transaction_state, in
// Kafka's layout (TransactionLogKey / TransactionLogValue, as Kafka's
// TransactionLog writes them): the key is (version 0, transactional id), the
// value (version 0, producer id, epoch, timeout, state, partitions, last
// update and start times); a null value deletes the id. The coordinator of a
// transactional id is the leader of its hash partition of that topic; it
// appends one record per state change and, on taking up the leadership,
// rebuilds the ids of the partition by replaying its log
// (ReplayTransactionLog).
//
// A transaction's consumer groups are written as their __consumer_offsets
// partitions, as Kafka's AddOffsetsToTxn adds them; read back, they are
// partitions of the transaction.
#ifndef EXACTLY_BROKER_TXN_TRANSACTION_LOG_H_
#define EXACTLY_BROKER_TXN_TRANSACTION_LOG_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "log/partition_log.h"
#include "txn/transaction_metadata.h"

namespace exactly::broker {

inline constexpr std::string_view kTransactionStateTopic =
    "__transaction_state";

std::string EncodeTransactionLogKey(std::string_view transactional_id);
// Version 0 of TransactionLogValue.
std::string EncodeTransactionLogValue(const TxnMetadata& m);

// The transactional id of a key; versions other than 0 are refused.
absl::StatusOr<std::string> DecodeTransactionLogKey(std::string_view key);
// Versions 0 and 1 (flexible, whose tagged fields are skipped).
absl::StatusOr<TxnMetadata> DecodeTransactionLogValue(
    std::string_view transactional_id, std::string_view value);

// A record batch (magic 2, no producer id) holding the one record of `m`'s
// state, timestamped `now_ms`.
std::string BuildTransactionLogBatch(const TxnMetadata& m, int64_t now_ms);

// The state of every transactional id in `log`, the last record of each id
// winning and a null value deleting it. A record that does not decode is
// skipped and counted in `*skipped`.
std::map<std::string, TxnMetadata> ReplayTransactionLog(
    const PartitionLog& log, size_t* skipped = nullptr);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_TXN_TRANSACTION_LOG_H_
