// Retention: deleting a partition's oldest batches by size (retention.bytes)
// and by age (retention.ms). Whole batches only, and never at or above the last
// stable offset, so that no reader loses a record it could still be shown or an
// open transaction's start.
#ifndef EXACTLY_BROKER_CLUSTER_RETENTION_H_
#define EXACTLY_BROKER_CLUSTER_RETENTION_H_

#include <cstdint>

#include "cluster/broker_state.h"
#include "cluster/partition.h"

namespace exactly::broker {

// Applies the topic's retention to `partition` (after appends, and after its
// retention configs change); returns the number of batches deleted.
int64_t EnforceRetention(BrokerState& b, Partition& partition);

// Moves the log start offset to `offset` (DeleteRecords, retention): drops the
// batches entirely below it from memory and from the store.
void DeleteRecordsBefore(BrokerState& b, Partition& partition, int64_t offset);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_RETENTION_H_
