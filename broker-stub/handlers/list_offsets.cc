// ListOffsets: the earliest offset (also the earliest local one: no tiered
// storage here), the latest (the high watermark, or the last stable offset for
// read_committed), the record with the largest timestamp, or the first offset
// at or after a timestamp; v0 the old-style list of segment offsets.
#include <algorithm>
#include <optional>
#include <vector>

#include "cluster/cluster_membership.h"
#include "handlers/authorize.h"
#include "handlers/handlers.h"
#include "log/partition_log.h"
#include "protocol/record_batch.h"
#include "replication/leader_epoch_cache.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::ListOffsetsResponse;

constexpr int8_t kReadCommitted = 1;

// The record with the largest timestamp in the whole log, as Kafka finds it
// for MAX_TIMESTAMP (KIP-734): the first batch whose max timestamp is the
// largest (control batches included), and in it the first record with that
// timestamp (the batch's first offset under LogAppendTime).
// The leader epoch that wrote `offset` (Kafka answers a record found by
// timestamp with its batch's epoch); the current one when the cache has none.
int32_t EpochOf(const Partition& partition, int64_t offset) {
  int32_t epoch = partition.leader_epoch();
  for (const EpochEntry& e : partition.replication().epochs.entries()) {
    if (e.start_offset > offset) break;
    epoch = e.epoch;
  }
  return epoch;
}

std::optional<PartitionLog::TimestampOffset> MaxTimestampOffset(
    const PartitionLog& log) {
  const StoredBatch* latest = nullptr;
  for (const StoredBatch& b : log.batches()) {
    if (b.header.record_count <= 0) continue;  // emptied by compaction
    if (latest == nullptr ||
        b.header.max_timestamp > latest->header.max_timestamp)
      latest = &b;
  }
  if (latest == nullptr) return std::nullopt;
  const int64_t max = latest->header.max_timestamp;
  if ((latest->header.attributes & protocol::kAttrLogAppendTime) == 0) {
    absl::StatusOr<std::vector<protocol::Record>> records =
        protocol::DecodeRecords({latest->header, latest->bytes()});
    if (records.ok()) {
      for (const protocol::Record& r : *records)
        if (r.timestamp == max)
          return PartitionLog::TimestampOffset{r.offset, max};
    }
  }
  return PartitionLog::TimestampOffset{latest->base_offset(), max};
}

// v0's answer, as Kafka's legacyFetchOffsetsBefore gives it for a log of one
// segment (this log has no segment files): the segment's first offset, and
// the log end when the log is not empty, each with the time it was last
// written (now, here); LATEST takes both, EARLIEST the first, a timestamp
// those written at or before it; newest first, at most max_num_offsets, none
// past the high watermark.
std::vector<int64_t> LegacyOffsets(const BrokerState& b,
                                   const PartitionLog& log, int64_t timestamp,
                                   int32_t max_num_offsets) {
  std::vector<int64_t> offsets = {log.log_start_offset()};
  if (log.log_end_offset() > log.log_start_offset())
    offsets.push_back(log.log_end_offset());
  size_t take = offsets.size();  // LATEST: from the last one down
  if (timestamp == protocol::kListOffsetsEarliest) {
    take = 1;
  } else if (timestamp != protocol::kListOffsetsLatest &&
             timestamp < b.NowMs()) {
    take = 0;
  }
  std::vector<int64_t> out;
  for (size_t i = take;
       i > 0 && out.size() < static_cast<size_t>(std::max(0, max_num_offsets));
       --i) {
    out.push_back(std::min(offsets[i - 1], log.high_watermark()));
  }
  return out;
}

}  // namespace

void HandleListOffsets(BrokerState& b, const RequestHeader& h,
                       protocol::ListOffsetsRequest& request, Responder r) {
  ListOffsetsResponse response;
  bool read_committed =
      h.api_version >= 2 && request.isolation_level == kReadCommitted;
  for (const auto& t : request.topics) {
    ListOffsetsResponse::Topic& rt = response.topics.emplace_back();
    rt.name = t.name;
    // Kafka's check: DESCRIBE on the topic.
    const bool may_describe =
        Allowed(b, r, AclOperation::kDescribe, AclResourceType::kTopic, t.name);
    for (const auto& p : t.partitions) {
      ListOffsetsResponse::Partition& rp = rt.partitions.emplace_back();
      rp.index = p.index;
      if (auto injected = b.faults().TakeError(h.api_key, &t.name, p.index)) {
        rp.error_code = *injected;
        continue;
      }
      if (!may_describe) {
        rp.error_code =
            static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      Partition* partition = b.FindPartition(t.name, p.index);
      if (partition == nullptr) {
        rp.error_code =
            static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      if (ErrorCode leadership = LeadershipError(b, t.name, p.index);
          leadership != ErrorCode::kNone) {
        rp.error_code = static_cast<int16_t>(leadership);
        continue;
      }
      rp.leader_epoch = partition->leader_epoch();
      const PartitionLog& log = partition->log();
      int64_t offset = -1;
      int64_t timestamp = -1;
      const int64_t visible_end = read_committed
                                      ? partition->last_stable_offset()
                                      : log.high_watermark();
      if (p.timestamp == protocol::kListOffsetsEarliest ||
          p.timestamp == protocol::kListOffsetsEarliestLocal) {
        offset = log.log_start_offset();
      } else if (p.timestamp == protocol::kListOffsetsLatest) {
        offset = visible_end;
      } else if (p.timestamp == protocol::kListOffsetsMaxTimestamp) {
        // As Kafka: found in the whole log, answered only once visible. Any
        // version: a client may send it below v7 (librdkafka 2.16 at v5 to a
        // broker offering no more), and a timestamp search would be wrong.
        auto found = MaxTimestampOffset(log);
        if (found && found->offset < visible_end &&
            found->offset >= log.log_start_offset()) {
          offset = found->offset;
          timestamp = found->timestamp;
        }
      } else {
        auto found = log.OffsetForTimestamp(p.timestamp);
        if (found && (!read_committed ||
                      found->offset < partition->last_stable_offset())) {
          offset = found->offset;
          timestamp = found->timestamp;
        }
      }
      // A record found by timestamp: its batch's epoch; none found: -1.
      const bool by_timestamp =
          p.timestamp >= 0 || p.timestamp == protocol::kListOffsetsMaxTimestamp;
      if (by_timestamp)
        rp.leader_epoch = offset >= 0 ? EpochOf(*partition, offset) : -1;
      if (h.api_version == 0) {
        rp.old_style_offsets =
            LegacyOffsets(b, log, p.timestamp, p.max_num_offsets);
      } else {
        rp.offset = offset;
        rp.timestamp = timestamp;
      }
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
