// A replica's truncation (KIP-101): before it copies from a new leader, a
// follower drops the end of its log that the leader does not have, so that
// the two logs never diverge (a batch acknowledged by an old leader under
// acks=1 and never replicated must not survive on one replica only).
#ifndef EXACTLY_BROKER_REPLICATION_LOG_TRUNCATION_H_
#define EXACTLY_BROKER_REPLICATION_LOG_TRUNCATION_H_

#include <cstdint>

#include "cluster/broker_state.h"
#include "cluster/partition.h"
#include "replication/leader_epoch_cache.h"

namespace exactly::broker {

// Where a follower whose latest epoch is `asked_epoch` cuts its log, given the
// leader's answer to OffsetForLeaderEpoch(asked_epoch) (KIP-279):
// - the leader knows that epoch: at its end there (or this log's end if
//   shorter);
// - the leader's largest epoch below it is another: at the smaller of where
//   that epoch ends on the leader and on this log;
// - no answer (the leader has no such epoch history): at this log's high
//   watermark, the pre-KIP-101 rule.
int64_t TruncationOffset(const LeaderEpochCache& own_epochs,
                         int64_t own_log_end, int64_t own_high_watermark,
                         int32_t asked_epoch, EpochEndOffset leader_answer);

// Cuts `partition`'s log at `offset` (whole batches, see
// PartitionLog::TruncateTo), forgets the epochs that started after it,
// rebuilds the producer states and the transaction index from what is left,
// and stages the deletions for the store. Returns the batches removed.
size_t TruncateLog(BrokerState& b, Partition& partition, int64_t offset);

// Empties `partition`'s log and starts it again at `offset` (Kafka's
// truncateFullyAndStartAt): at its leader's log start, when that lies past
// this log's end (the leader deleted records this replica never copied, so
// nothing here can be continued); or, for a log that is empty, at the first
// batch the leader sends, when the leader's log start falls inside it.
void RestartLogAt(BrokerState& b, Partition& partition, int64_t offset);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_LOG_TRUNCATION_H_
