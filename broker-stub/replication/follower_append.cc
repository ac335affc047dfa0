#include "replication/follower_append.h"

#include "absl/strings/str_cat.h"
#include "crc32c/crc32c.h"
#include "protocol/record_batch.h"

namespace exactly::broker {
namespace {

using protocol::ErrorCode;

// The coordinator epoch a control batch carries (the value of its one record:
// int16 version, int32 coordinator epoch).
int32_t CoordinatorEpochOf(const protocol::RecordBatchView& batch) {
  absl::StatusOr<std::vector<protocol::Record>> records =
      protocol::DecodeRecords(batch);
  if (!records.ok() || records->empty() || !records->front().value ||
      records->front().value->size() < 6)
    return -1;
  const std::string& v = *records->front().value;
  uint32_t epoch = 0;
  for (int i = 2; i < 6; ++i) epoch = (epoch << 8) | static_cast<uint8_t>(v[i]);
  return static_cast<int32_t>(epoch);
}

}  // namespace

FollowerAppendOutcome AppendAsFollower(BrokerState& b, Partition& partition,
                                       std::string_view records) {
  FollowerAppendOutcome out;
  PartitionLog& log = partition.log();
  while (records.size() >= protocol::kBatchHeaderSize) {
    absl::StatusOr<protocol::RecordBatchHeader> parsed =
        protocol::ParseBatchHeader(records);
    if (!parsed.ok()) {
      out.error = Error(ErrorCode::kCorruptMessage,
                        std::string(parsed.status().message()));
      break;
    }
    const protocol::RecordBatchHeader& h = *parsed;
    const size_t size = h.size_in_bytes();
    if (size > records.size()) break;  // a partial batch at the end: next time
    const std::string_view bytes = records.substr(0, size);
    records.remove_prefix(size);
    if (h.last_offset() < log.log_end_offset()) continue;  // already held
    if (h.base_offset != log.log_end_offset()) {
      out.error = Error(
          ErrorCode::kOffsetOutOfRange,
          absl::StrCat("fetched batch at ", h.base_offset,
                       " does not continue the log at ", log.log_end_offset()));
      break;
    }
    // The CRC covers everything from the attributes on.
    if (crc32c::Value(bytes.substr(protocol::kBatchAttributesOffset)) !=
        h.crc) {
      out.error = Error(
          ErrorCode::kCorruptMessage,
          absl::StrCat("fetched batch at ", h.base_offset, " fails its CRC"));
      break;
    }
    SharedBuffer copy = CopyToSharedBuffer(bytes);
    StoredBatch& stored =
        log.Append(copy, copy.get(), size, h, h.partition_leader_epoch);
    partition.replication().epochs.Assign(h.partition_leader_epoch,
                                          stored.base_offset());
    if (h.is_control()) {
      protocol::RecordBatchView view{stored.header, stored.bytes()};
      absl::StatusOr<protocol::ControlType> type =
          protocol::ReadControlType(view);
      if (type.ok()) {
        partition.transactions().OnMarker(
            h.producer_id, *type == protocol::ControlType::kCommit,
            stored.base_offset());
        partition.producers().OnMarker(h.producer_id, h.producer_epoch,
                                       CoordinatorEpochOf(view),
                                       stored.base_offset());
      }
    } else {
      if (h.has_producer_id()) partition.producers().OnAppend(stored.header);
      if (h.is_transactional())
        partition.transactions().OnTransactionalBatch(h.producer_id,
                                                      stored.base_offset());
    }
    b.PersistAppend(partition, stored);
    out.records += h.record_count;
  }
  b.commits().NoteAppended(out.records);
  return out;
}

}  // namespace exactly::broker
