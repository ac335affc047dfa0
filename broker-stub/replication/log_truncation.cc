#include "replication/log_truncation.h"

#include <algorithm>
#include <set>
#include <vector>

#include "replication/batch_effects.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "util/logging.h"

namespace exactly::broker {

int64_t TruncationOffset(const LeaderEpochCache& own_epochs,
                         int64_t own_log_end, int64_t own_high_watermark,
                         int32_t asked_epoch, EpochEndOffset leader_answer) {
  if (leader_answer.epoch == kUndefinedEpoch ||
      leader_answer.end_offset == kUndefinedEpochOffset)
    return std::min(own_high_watermark, own_log_end);
  if (leader_answer.epoch == asked_epoch)
    return std::min(leader_answer.end_offset, own_log_end);
  const EpochEndOffset own =
      own_epochs.EndOffsetFor(leader_answer.epoch, own_log_end);
  const int64_t own_end =
      own.end_offset == kUndefinedEpochOffset ? own_log_end : own.end_offset;
  return std::min({leader_answer.end_offset, own_end, own_log_end});
}

size_t TruncateLog(BrokerState& b, Partition& partition, int64_t offset) {
  PartitionLog& log = partition.log();
  const int64_t start_before = log.log_start_offset();
  std::vector<StoredBatch> removed = log.TruncateTo(offset);
  if (removed.empty()) return 0;
  partition.replication().epochs.TruncateFromEnd(log.log_end_offset());

  // The producers the removed batches touched are rebuilt by replaying the
  // log that is left (every other producer's state is unchanged), and so is
  // the transaction index: a transaction whose marker was cut is open again.
  std::set<int64_t> touched;
  for (const StoredBatch& batch : removed)
    if (batch.header.has_producer_id())
      touched.insert(batch.header.producer_id);
  ProducerStateTable replayed;
  TransactionIndex transactions;
  for (const StoredBatch& batch : log.batches())
    ApplyBatchEffects(batch, replayed, transactions);
  transactions.DeleteBefore(log.log_start_offset());
  partition.transactions() = std::move(transactions);
  for (int64_t producer_id : touched) {
    if (const ProducerEntry* entry = replayed.Find(producer_id))
      partition.producers().Restore(producer_id, *entry);
    else
      partition.producers().Erase(producer_id);
    b.PersistProducer(partition, producer_id);
  }

  if (Store* store = b.store()) {
    for (const StoredBatch& batch : removed)
      store->Delete(keys::Batch(partition.topic_id(), partition.index(),
                                batch.base_offset()));
  }
  if (log.log_start_offset() != start_before) b.PersistLogStart(partition);
  LogInfo("truncated ", partition.topic(), "-", partition.index(), " to ",
          log.log_end_offset(), ": ", removed.size(), " batch(es) from ",
          removed.front().base_offset(), " that the leader does not have");
  return removed.size();
}

void RestartLogAt(BrokerState& b, Partition& partition, int64_t offset) {
  const int64_t end_before = partition.log().log_end_offset();
  TruncateLog(b, partition, 0);
  partition.replication().epochs.Clear();
  partition.log().StartEmptyAt(offset);
  b.PersistLogStart(partition);
  b.commits().CommitSoon();
  LogInfo(partition.topic(), "-", partition.index(), " starts over at ", offset,
          " to follow its leader (it ended at ", end_before, ")");
}

}  // namespace exactly::broker
