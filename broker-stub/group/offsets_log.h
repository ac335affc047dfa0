// The group coordinator's state as records of __consumer_offsets, in Kafka's
// layout (the classic group coordinator's, GroupMetadataManager, and the
// classic-group records of Kafka 4's coordinator, which are the same bytes).
// Every key and value starts with an int16 version:
//
//   OffsetCommitKey    version 0 or 1: group, topic, partition
//   GroupMetadataKey   version 2:      group
//   OffsetCommitValue  0: offset, metadata, commit timestamp
//                      1: + expire timestamp
//                      2: as 0
//                      3: offset, leader epoch, metadata, commit timestamp
//                      4: 3, flexible (compact strings, tagged fields)
//   GroupMetadataValue 0: protocol type, generation, protocol (nullable),
//                         leader (nullable), members (member id, client id,
//                         client host, session timeout, subscription,
//                         assignment)
//                      1: + each member's rebalance timeout (before its
//                         session timeout)
//                      2: + current state timestamp (before the members)
//                      3: + each member's group instance id (nullable, after
//                         its member id)
//                      4: 3, flexible
//
// Written: keys at versions 1 and 2, OffsetCommitValue at 3 and
// GroupMetadataValue at 3, as Kafka 3.x writes them; read: every version
// above. A null value deletes the offset or the group. Key versions 3 and up
// (Kafka 4's consumer-group, share-group, ... records) are refused, and a
// replay skips them.
//
// A TxnOffsetCommit is written as a transactional batch of its producer; its
// offsets take effect when that producer's COMMIT marker (a control batch)
// follows in the same partition, and are dropped at an ABORT marker, as
// Kafka's coordinator loads them.
#ifndef EXACTLY_BROKER_GROUP_OFFSETS_LOG_H_
#define EXACTLY_BROKER_GROUP_OFFSETS_LOG_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "group/group.h"    // GroupRecord
#include "group/offsets.h"  // TopicPartition, OffsetAndMetadata, GroupOffsets
#include "log/partition_log.h"

namespace exactly::broker {

// Keys. OffsetCommitKey is written at version 1 (group, topic, partition);
// GroupMetadataKey at version 2 (group).
std::string EncodeOffsetCommitKey(std::string_view group,
                                  std::string_view topic, int32_t partition);
std::string EncodeGroupMetadataKey(std::string_view group);

struct OffsetsLogKey {
  enum class Kind { kOffset, kGroup };
  Kind kind = Kind::kOffset;
  std::string group;
  TopicPartition tp;  // kOffset only
};

// Versions 0 and 1 are offset keys, 2 a group key; anything else (e.g. Kafka
// 4's new-coordinator records, versions 3+) is an error the caller skips, as
// are trailing bytes.
absl::StatusOr<OffsetsLogKey> DecodeOffsetsLogKey(std::string_view key);

// OffsetCommitValue at version 3 (offset, leader epoch, metadata, commit
// timestamp).
std::string EncodeOffsetCommitValue(const OffsetAndMetadata& o);
// Versions 0..4. Older versions have no leader epoch (-1); version 1's expire
// timestamp is read and dropped. record_seq is left 0.
absl::StatusOr<OffsetAndMetadata> DecodeOffsetCommitValue(
    std::string_view value);

// GroupMetadataValue at version 3, with `now_ms` as its current state
// timestamp; a member's `metadata` is its subscription.
std::string EncodeGroupMetadataValue(const GroupRecord& g, int64_t now_ms);
// Versions 0..4; the record's group_id is `group` (the key's). A version 0
// member's rebalance timeout is its session timeout, as Kafka reads it.
absl::StatusOr<GroupRecord> DecodeGroupMetadataValue(std::string_view group,
                                                     std::string_view value);

// One record of the log; a null value is a tombstone.
struct OffsetsLogRecord {
  std::string key;
  std::optional<std::string> value;
};

// A record batch (magic 2, uncompressed) of `records`, timestamped now_ms.
// producer_id >= 0 makes it a transactional batch of that producer and epoch
// (as Kafka's coordinator appends a TxnOffsetCommit); otherwise no producer
// id. The base sequence is 0 either way, as Kafka's GroupMetadataManager
// builds these batches (MemoryRecords.builder(..., producerId, producerEpoch,
// 0, isTxnOffsetCommit, ...)), so the bytes match Kafka's; it is not a
// producer sequence, and an append of these batches must not be checked as
// one (Kafka appends them with AppendOrigin.COORDINATOR). Empty when
// `records` is.
std::string BuildOffsetsLogBatch(const std::vector<OffsetsLogRecord>& records,
                                 int64_t now_ms, int64_t producer_id = -1,
                                 int16_t producer_epoch = -1);

// What replaying one partition's log yields for one group.
struct LoadedGroup {
  // The last GroupMetadata; none when never written or deleted by a
  // tombstone.
  std::optional<GroupRecord> record;
  // Committed offsets, plus the transactional ones whose marker is not in the
  // log yet (pending_txns).
  GroupOffsets offsets;
};

// Replays `log` from its first batch: an offset record sets the committed
// offset (a tombstone removes it); a group record sets `record` (a tombstone
// clears it); an offset record of a transactional batch is staged per
// producer (a transactional tombstone unstages it) and applied
// (GroupOffsets::CompleteTxn, commit) or dropped when that producer's COMMIT
// or ABORT marker follows; what is still staged at the end is left in the
// groups' pending_txns (GroupOffsets::StageTxn with the batch's producer id
// and epoch). Every offset's record_seq is its log offset + 1, so that a
// regular commit recorded after a TxnOffsetCommit outlives that transaction's
// commit, as in Kafka. A group left with no record and no offsets is not
// returned. A record (or a whole batch, or a marker) that does not decode is
// skipped and counted in *skipped.
std::map<std::string, LoadedGroup> ReplayOffsetsLog(const PartitionLog& log,
                                                    size_t* skipped = nullptr);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_GROUP_OFFSETS_LOG_H_
