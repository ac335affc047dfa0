// Where a partition's high watermark may move: to the end of what the store
// holds when no follower matters, to what every in-sync replica holds when
// leading (ReplicaTracker), to what the leader reported (never past its own
// log) when following. It only ever grows.
#ifndef EXACTLY_BROKER_REPLICATION_HIGH_WATERMARK_H_
#define EXACTLY_BROKER_REPLICATION_HIGH_WATERMARK_H_

#include "cluster/partition.h"

namespace exactly::broker {

// Moves the high watermark as far as replication allows. Returns whether it
// moved (readers and acks=all produces may be woken).
bool UpdateHighWatermark(Partition& partition);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_HIGH_WATERMARK_H_
