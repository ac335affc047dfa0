// Appending to a partition: the checks Kafka's broker makes before an append
// (format, CRC, size, producer sequence and epoch, transaction state), the
// append itself, and the staging of its durable form. Used by Produce and by
// the transaction coordinator's markers.
#ifndef EXACTLY_BROKER_CLUSTER_APPENDER_H_
#define EXACTLY_BROKER_CLUSTER_APPENDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/api_error.h"
#include "cluster/broker_state.h"
#include "cluster/partition.h"
#include "protocol/record_batch.h"

namespace exactly::broker {

struct AppendOutcome {
  ApiError error;
  int64_t base_offset =
      -1;  // of the first batch (its original offset for a duplicate)
  int64_t log_append_time = -1;  // when the topic uses LogAppendTime
  int64_t records_appended = 0;  // 0 for a duplicate
  bool duplicate = false;
  // With INVALID_RECORD: each refused record's index in its batch and why
  // (Produce v8's record_errors).
  std::vector<std::pair<int32_t, std::string>> record_errors;
};

// Validates and appends the record batches of one Produce partition. Nothing is
// visible to readers until the commit pipeline advances the high watermark.
// `records` lies inside `frame` (the request it arrived in), which the log
// keeps instead of copying the batches.
AppendOutcome AppendRecords(BrokerState& b, Partition& partition,
                            const Topic& topic, const SharedBuffer& frame,
                            std::string_view records);

// Appends a batch a coordinator built itself (Kafka's AppendOrigin.Coordinator:
// none of a client's checks), with its effect on the partition's producer and
// transaction state: a transactional one opens its producer's transaction
// here, which that producer's marker ends. Returns the batch's base offset.
int64_t AppendCoordinatorBatch(BrokerState& b, Partition& partition,
                               std::string_view batch);

// Appends a transaction marker for `producer_id` (a control batch) and updates
// the partition's transaction index and producer state.
int64_t AppendMarker(BrokerState& b, Partition& partition, int64_t producer_id,
                     int16_t producer_epoch, protocol::ControlType type,
                     int32_t coordinator_epoch);

// A marker a partition leader is asked to write (the coordinator's
// WriteTxnMarkers, an operator's abort), with the checks Kafka's
// ProducerAppendInfo makes first: an epoch older than the producer's is
// INVALID_PRODUCER_EPOCH, a coordinator epoch older than the one of the
// producer's last marker TRANSACTION_COORDINATOR_FENCED. A producer with no
// open transaction here still gets the marker, as in Kafka. The marker is
// published once committed. Returns its offset.
struct MarkerOutcome {
  ApiError error;
  int64_t offset = -1;
};
MarkerOutcome WriteTxnMarker(BrokerState& b, Partition& partition,
                             int64_t producer_id, int16_t producer_epoch,
                             protocol::ControlType type,
                             int32_t coordinator_epoch);

// After a commit: marks everything appended so far on `partition` durable,
// makes it visible as far as replication allows (replication/high_watermark.h)
// and wakes the fetches and produces waiting for it.
void PublishAppends(BrokerState& b, Partition& partition);

// Publishes each of `partitions` (topic, index) once the appends staged so far
// are committed; a partition deleted meanwhile is skipped. For markers, which
// are appended outside a Produce.
void PublishAppendsAfterCommit(
    BrokerState& b, std::vector<std::pair<std::string, int32_t>> partitions);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_APPENDER_H_
