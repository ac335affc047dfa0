// What one stored batch does to its partition's state beside the log: a data
// batch with a producer id moves that producer's sequence window, a
// transactional one opens (or extends) its transaction, a marker ends it. The
// leader applies these as it appends (cluster/appender.cc); a follower applies
// them to every batch it copies and replays them when it truncates, so its
// producer states and transaction index are the leader's.
#ifndef EXACTLY_BROKER_REPLICATION_BATCH_EFFECTS_H_
#define EXACTLY_BROKER_REPLICATION_BATCH_EFFECTS_H_

#include "cluster/partition.h"
#include "log/partition_log.h"
#include "log/transaction_index.h"
#include "producer/producer_state.h"

namespace exactly::broker {

// Applies `batch` (already in the log at its offset) to `producers` and
// `transactions`.
void ApplyBatchEffects(const StoredBatch& batch, ProducerStateTable& producers,
                       TransactionIndex& transactions);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_BATCH_EFFECTS_H_
