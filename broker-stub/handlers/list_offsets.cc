// ListOffsets: the earliest offset, the latest (the high watermark, or the last
// stable offset for read_committed), or the first offset at or after a
// timestamp.
#include "cluster/cluster_membership.h"
#include "handlers/handlers.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::ListOffsetsResponse;

constexpr int8_t kReadCommitted = 1;

}  // namespace

void HandleListOffsets(BrokerState& b, const RequestHeader& h,
                       protocol::ListOffsetsRequest& request, Responder r) {
  ListOffsetsResponse response;
  bool read_committed =
      h.api_version >= 2 && request.isolation_level == kReadCommitted;
  for (const auto& t : request.topics) {
    ListOffsetsResponse::Topic& rt = response.topics.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partitions) {
      ListOffsetsResponse::Partition& rp = rt.partitions.emplace_back();
      rp.index = p.index;
      if (auto injected = b.faults().TakeError(h.api_key, &t.name, p.index)) {
        rp.error_code = *injected;
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
      if (p.timestamp == protocol::kListOffsetsEarliest) {
        offset = log.log_start_offset();
      } else if (p.timestamp == protocol::kListOffsetsLatest) {
        offset = read_committed ? partition->last_stable_offset()
                                : log.high_watermark();
      } else {
        auto found = log.OffsetForTimestamp(p.timestamp);
        if (found && (!read_committed ||
                      found->offset < partition->last_stable_offset())) {
          offset = found->offset;
          timestamp = found->timestamp;
        }
      }
      if (h.api_version == 0) {
        if (offset >= 0) rp.old_style_offsets.push_back(offset);
      } else {
        rp.offset = offset;
        rp.timestamp = timestamp;
      }
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
