#include "cluster/retention.h"

#include "storage/keys.h"

namespace exactly::broker {

int64_t EnforceRetention(BrokerState& b, Partition& partition) {
  Topic* topic = b.topics().Find(partition.topic());
  if (topic == nullptr) return 0;
  const TopicConfig& config = topic->config;
  // As Kafka: size and time retention apply with cleanup.policy "delete" only.
  if (!config.cleanup_delete()) return 0;
  if (config.retention_bytes() < 0 && config.retention_ms() < 0) return 0;
  const PartitionLog& log = partition.log();
  int64_t limit = partition.last_stable_offset();
  int64_t start = log.RetentionStartOffset(config.retention_bytes(), limit);
  if (config.retention_ms() >= 0) {
    int64_t cutoff = b.NowMs() - config.retention_ms();
    for (const StoredBatch& batch : log.batches()) {
      if (batch.next_offset() > limit || batch.header.max_timestamp >= cutoff)
        break;
      start = std::max(start, batch.next_offset());
    }
  }
  if (start <= log.log_start_offset()) return 0;
  size_t before = log.batch_count();
  DeleteRecordsBefore(b, partition, start);
  return static_cast<int64_t>(before - log.batch_count());
}

void DeleteRecordsBefore(BrokerState& b, Partition& partition, int64_t offset) {
  std::vector<int64_t> removed = partition.log().DeleteBefore(offset);
  partition.transactions().DeleteBefore(partition.log().log_start_offset());
  if (Store* store = b.store()) {
    for (int64_t base : removed) {
      store->Delete(keys::Batch(partition.topic_id(), partition.index(), base));
    }
    b.PersistLogStart(partition);
    b.commits().CommitSoon();
  }
}

}  // namespace exactly::broker
