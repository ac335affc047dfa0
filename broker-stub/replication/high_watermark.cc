#include "replication/high_watermark.h"

#include <algorithm>

namespace exactly::broker {

bool UpdateHighWatermark(Partition& partition) {
  PartitionLog& log = partition.log();
  const PartitionReplication& r = partition.replication();
  const int64_t durable = log.durable_end_offset();
  int64_t target = durable;
  if (r.role == PartitionReplication::Role::kFollower) {
    target = std::min(r.leader_high_watermark, durable);
  } else if (r.replication_factor > 1) {
    target = r.followers.HighWatermark(durable);
  }
  const int64_t before = log.high_watermark();
  log.AdvanceHighWatermark(target);
  return log.high_watermark() != before;
}

}  // namespace exactly::broker
