#include "replication/follower_append.h"

#include "absl/strings/str_cat.h"
#include "crc32c/crc32c.h"
#include "protocol/record_batch.h"
#include "replication/batch_effects.h"
#include "replication/log_truncation.h"

namespace exactly::broker {
using protocol::ErrorCode;

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
    if (h.base_offset < log.log_end_offset() && log.batches().empty()) {
      // The leader's log start falls inside this batch (DeleteRecords): an
      // empty log starts at the batch, as Kafka's follower does; its log
      // start moves up to the leader's once the batch is committed here.
      RestartLogAt(b, partition, h.base_offset);
    }
    // A compacted leader's log has gaps (log/compaction.h): the batch may
    // start past this log's end, as Kafka's followers accept.
    if (h.base_offset > log.log_end_offset()) log.SkipTo(h.base_offset);
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
    ApplyBatchEffects(stored, partition.producers(), partition.transactions());
    b.PersistAppend(partition, stored);
    out.records += h.record_count;
  }
  b.commits().NoteAppended(out.records);
  return out;
}

}  // namespace exactly::broker
