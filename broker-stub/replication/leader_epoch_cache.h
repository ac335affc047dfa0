// Which leader epoch wrote which stretch of a partition's log (Kafka's
// leader-epoch checkpoint, KIP-101): a list of (epoch, start offset), both
// ascending. It answers OffsetForLeaderEpoch, the question a replica asks
// before it follows a new leader ("where did my last epoch end on your log?"),
// so that it truncates exactly what the new leader does not have and two logs
// never diverge.
#ifndef EXACTLY_BROKER_REPLICATION_LEADER_EPOCH_CACHE_H_
#define EXACTLY_BROKER_REPLICATION_LEADER_EPOCH_CACHE_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace exactly::broker {

inline constexpr int32_t kUndefinedEpoch = -1;
inline constexpr int64_t kUndefinedEpochOffset = -1;

struct EpochEntry {
  int32_t epoch = 0;
  int64_t start_offset = 0;
  bool operator==(const EpochEntry&) const = default;
};

struct EpochEndOffset {
  int32_t epoch = kUndefinedEpoch;
  int64_t end_offset = kUndefinedEpochOffset;
  bool operator==(const EpochEndOffset&) const = default;
};

class LeaderEpochCache {
 public:
  // Records that `epoch` starts writing at `start_offset` (a batch of a new
  // epoch was appended, or this replica became leader). The latest epoch
  // again, at or after where it started, changes nothing; entries the new one
  // contradicts (an epoch not below it, or a start not before it) are
  // dropped, so both columns stay ascending.
  void Assign(int32_t epoch, int64_t start_offset);

  // OffsetForLeaderEpoch, answered as Kafka answers it:
  // - the latest epoch ends at the log end;
  // - an older epoch ends where the next known epoch starts, and the answer
  //   names the largest known epoch not above it (a follower that asks for an
  //   epoch this log never had learns where the last shared one ended);
  // - an epoch older than all known ones ends where the first known starts;
  // - an undefined epoch, or one above the latest, has no answer.
  EpochEndOffset EndOffsetFor(int32_t epoch, int64_t log_end_offset) const;

  // The log was truncated to end at `end_offset`: epochs that start at or
  // after it are gone.
  void TruncateFromEnd(int64_t end_offset);
  // The log now starts at `start_offset` (retention, DeleteRecords): epochs
  // wholly before it are gone, and the first one left starts there.
  void TruncateFromStart(int64_t start_offset);

  // The log starts over empty (a follower behind its leader's log start).
  void Clear() { entries_.clear(); }

  std::optional<EpochEntry> latest() const;
  const std::vector<EpochEntry>& entries() const { return entries_; }

 private:
  std::vector<EpochEntry> entries_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_LEADER_EPOCH_CACHE_H_
