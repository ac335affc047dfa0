// The group coordinator: every consumer group on this broker (membership, see
// group.h) and their offsets (see offsets.h), made durable in the broker's
// store and loaded back at start-up. The group handlers
// (handlers/join_group.cc, ...) call it; the transaction coordinator calls the
// transactional-offset half when a transaction that committed offsets ends.
//
// Durability, on a single broker: whatever a call stages in the store is
// committed with the event loop's next group commit. Calls that take a `done`
// callback run it once that commit happened, so that a client is only told
// about what survives a crash. In memory (no data dir) the same path runs
// without the store.
//
// In a cluster, as in Kafka: the state is records of __consumer_offsets
// (group/offsets_log.h), appended to the group's hash partition through a
// GroupLog and acknowledged once every in-sync replica holds them. This
// broker coordinates the groups of the partitions it leads: taking one up, it
// replays the partition's log (LoadPartition); giving it up, it forgets them
// (UnloadPartition). A TxnOffsetCommit is a transactional batch of its
// producer in that log, applied when the transaction's marker on the
// partition is (CompleteTxnOffsets), and found pending again by a coordinator
// that loads the log before the marker.
#ifndef EXACTLY_BROKER_GROUP_GROUP_COORDINATOR_H_
#define EXACTLY_BROKER_GROUP_GROUP_COORDINATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "cluster/api_error.h"
#include "cluster/commit_pipeline.h"
#include "exactly/broker/broker.h"
#include "group/clock.h"
#include "group/group.h"
#include "group/offsets.h"
#include "group/offsets_log.h"
#include "log/partition_log.h"
#include "protocol/error_code.h"
#include "storage/store.h"

namespace exactly::broker {

// A transactional offset, as TxnOffsetCommit carries it.
struct TxnOffset {
  std::string topic;
  int32_t partition;
  int64_t offset;
  std::optional<std::string> metadata;
  int32_t leader_epoch = -1;
};

// One partition of an OffsetCommit. `error` is filled in; a partition that
// arrives with an error set (unknown topic, injected fault) is left alone.
struct OffsetCommitItem {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::optional<std::string> metadata;
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
};

// One partition of an OffsetFetch answer.
struct FetchedOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1;  // -1: nothing committed
  int32_t leader_epoch = -1;
  std::string metadata;
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
};

// Where the coordinator's staged writes become durable: the broker's commit
// pipeline (cluster/commit_pipeline.h), or a fake in unit tests.
class CommitQueue {
 public:
  virtual ~CommitQueue() = default;
  // Runs `done` once everything staged so far is committed (or failed to).
  virtual void AfterCommit(
      absl::AnyInvocable<void(const absl::Status&)> done) = 0;
  // Commits what is staged by the end of this turn, with no callback.
  virtual void CommitSoon() = 0;
};

// In a cluster: where the coordinator's records go, the group's partition of
// __consumer_offsets (cluster/consumer_offsets_log.h appends them there).
class GroupLog {
 public:
  virtual ~GroupLog() = default;
  // Appends `records` to partition `index` as one batch, transactional when
  // `producer_id` >= 0 (a TxnOffsetCommit), and runs `done(kNone)` once every
  // in-sync replica holds it; otherwise `done` gets the error to answer
  // (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE).
  virtual void Append(int32_t index, std::vector<OffsetsLogRecord> records,
                      int64_t producer_id, int16_t producer_epoch,
                      absl::AnyInvocable<void(protocol::ErrorCode)> done) = 0;
};

struct GroupOverview {
  std::string group_id;
  std::string protocol_type;
  std::string state;
};

class GroupCoordinator : private GroupPersistence {
 public:
  // Kafka's offset.metadata.max.bytes.
  static constexpr size_t kMaxMetadataBytes = 4096;

  // `store` is null in memory. `commits` and `store` outlive the coordinator.
  GroupCoordinator(const BrokerOptions& options, std::unique_ptr<Clock> clock,
                   Store* store, CommitPipeline& commits);
  GroupCoordinator(const BrokerOptions& options, std::unique_ptr<Clock> clock,
                   Store* store, CommitQueue& commits);
  ~GroupCoordinator() override;
  GroupCoordinator(const GroupCoordinator&) = delete;
  GroupCoordinator& operator=(const GroupCoordinator&) = delete;

  // Loads groups, committed offsets and pending transactional offsets from
  // the store. Members of a stored group must heartbeat within their session
  // timeout from now on, or are removed.
  absl::Status Load();

  // ---- In a cluster ----
  // From now on the state goes to `log` (which outlives the coordinator), not
  // to the store; what Load() read is dropped: the groups come from the log.
  void UseLog(GroupLog* log);
  // Takes up __consumer_offsets partition `index` at coordinator epoch
  // `epoch` (its leader epoch): its groups and offsets are rebuilt from `log`.
  // Members of a loaded group must heartbeat within their session timeout
  // from now on.
  void LoadPartition(int32_t index, int32_t epoch, const PartitionLog& log);
  // Gives it up: its groups are forgotten, parked joins and syncs answered
  // NOT_COORDINATOR.
  void UnloadPartition(int32_t index);
  // Partition -> coordinator epoch, for those this broker coordinates.
  const std::map<int32_t, int32_t>& loaded_partitions() const {
    return loaded_;
  }

  // ---- Membership (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) ----
  void JoinGroup(const std::string& group_id, JoinArgs args, JoinCallback done);
  void SyncGroup(const std::string& group_id, SyncArgs args, SyncCallback done);
  protocol::ErrorCode Heartbeat(const std::string& group_id,
                                const std::string& member_id,
                                const std::optional<std::string>& instance_id,
                                int32_t generation);
  LeaveResult LeaveGroup(const std::string& group_id,
                         const std::vector<LeavingMember>& members);

  // ---- Offsets ----
  // OffsetCommit: checks membership and generation (see
  // Group::ValidateOffsetCommit) and metadata size, stages the rest, and runs
  // `done` with the per-partition errors once they are durable.
  void CommitOffsets(
      const std::string& group_id, int32_t generation,
      const std::string& member_id,
      const std::optional<std::string>& instance_id,
      std::vector<OffsetCommitItem> items,
      absl::AnyInvocable<void(std::vector<OffsetCommitItem>)> done);
  // OffsetFetch of `partitions` (every committed one when null). With
  // `require_stable`, a partition with a commit still in flight or a pending
  // transactional offset answers UNSTABLE_OFFSET_COMMIT.
  std::vector<FetchedOffset> FetchOffsets(
      const std::string& group_id,
      const std::optional<std::vector<TopicPartition>>& partitions,
      bool require_stable) const;
  std::optional<int64_t> CommittedOffset(const std::string& group,
                                         const std::string& topic,
                                         int32_t partition) const;

  // ---- Transactional offsets (TxnOffsetCommit and the transaction
  // coordinator) ----
  // TxnOffsetCommit v3+: the sender's membership, as for OffsetCommit (no
  // state check). Creates the group if it does not exist.
  protocol::ErrorCode ValidateTxnOffsetCommit(
      const std::string& group, int32_t generation,
      const std::string& member_id,
      const std::optional<std::string>& instance_id);
  // TxnOffsetCommit: offsets held per (group, producer id), invisible to
  // OffsetFetch until the transaction commits; persisted (so that a broker
  // restarted mid-commit can still apply them). An epoch older than the one
  // already pending for the producer is fenced (INVALID_PRODUCER_EPOCH).
  // Returns that check's error; when there is none, `written` gets the
  // outcome of the write (kNone once durable; a failed write in a cluster
  // takes the staged offsets back).
  ApiError StageTxnOffsets(
      const std::string& group, int64_t producer_id, int16_t producer_epoch,
      const std::vector<TxnOffset>& offsets,
      absl::AnyInvocable<void(protocol::ErrorCode)> written = nullptr);
  // Called by the transaction coordinator when it writes the txn's marker to
  // the group's offsets: commit applies the pending offsets (persisted, each
  // unless a regular commit recorded after it is in place), abort drops them.
  void CompleteTxnOffsets(const std::string& group, int64_t producer_id,
                          bool commit);
  // The groups holding transactional offsets of `producer_id`: those a
  // marker for it on their offsets partition completes.
  std::vector<std::string> GroupsWithPendingTxnOffsets(
      int64_t producer_id) const;
  // For OffsetFetch with require_stable (v7+): UNSTABLE_OFFSET_COMMIT while
  // any pending txn offset exists for that (group, topic, partition).
  bool HasPendingTxnOffsets(const std::string& group, const std::string& topic,
                            int32_t partition) const;
  // DeleteTopics: forget every committed and pending offset of `topic` in
  // every group.
  void ForgetTopic(const std::string& topic);

  // ---- Admin (DescribeGroups, ListGroups, DeleteGroups, OffsetDelete) ----
  // Unknown groups are described as Dead, as Kafka does.
  GroupSummary DescribeGroup(const std::string& group_id) const;
  // Every group in one of `states` (any state when empty; case-insensitive).
  std::vector<GroupOverview> ListGroups(
      const std::vector<std::string>& states) const;
  // Deletes each Empty group with its offsets: NONE, GROUP_ID_NOT_FOUND or
  // NON_EMPTY_GROUP per group, to `done` once durable.
  void DeleteGroups(
      const std::vector<std::string>& group_ids,
      absl::AnyInvocable<void(std::vector<protocol::ErrorCode>)> done);
  // OffsetDelete: a group-level error, or per-partition errors
  // (GROUP_SUBSCRIBED_TO_TOPIC while a member consumes the topic) in `items`.
  struct OffsetDeleteItem {
    std::string topic;
    int32_t partition = 0;
    protocol::ErrorCode error = protocol::ErrorCode::kNone;
  };
  void DeleteOffsets(const std::string& group_id,
                     std::vector<OffsetDeleteItem> items,
                     absl::AnyInvocable<void(protocol::ErrorCode,
                                             std::vector<OffsetDeleteItem>)>
                         done);

  // For tests: the group, or null.
  const Group* FindGroup(const std::string& group_id) const;

 private:
  struct Entry {
    std::unique_ptr<Group> group;
    GroupOffsets offsets;
  };

  Entry* Find(const std::string& group_id);
  const Entry* Find(const std::string& group_id) const;
  Entry& GetOrCreate(const std::string& group_id);
  uint64_t NextRecordSeq() { return next_record_seq_++; }
  int64_t WallClockMs() const;

  void StoreGroup(const GroupRecord& record,
                  absl::AnyInvocable<void(protocol::ErrorCode)> done) override;
  void PersistOffset(const std::string& group, const TopicPartition& tp,
                     const OffsetAndMetadata& offset);
  void PersistTxnOffset(const std::string& group, int64_t producer_id,
                        int16_t producer_epoch, const TopicPartition& tp,
                        const OffsetAndMetadata& offset);
  // Makes what was staged for `group` durable and runs `done` with kNone or
  // the error to answer: in a cluster by appending `records` to the group's
  // partition (a transactional batch when `producer_id` >= 0); on a single
  // broker by committing the store (`records` unused).
  void Write(const std::string& group, std::vector<OffsetsLogRecord> records,
             absl::AnyInvocable<void(protocol::ErrorCode)> done,
             int64_t producer_id = -1, int16_t producer_epoch = -1);

  GroupConfig config_;
  int32_t min_session_timeout_ms_;
  int32_t max_session_timeout_ms_;
  std::unique_ptr<Clock> clock_;
  Store* store_;                           // null in memory
  std::unique_ptr<CommitQueue> pipeline_;  // when built on a CommitPipeline
  CommitQueue& commits_;
  std::map<std::string, Entry> groups_;
  uint64_t next_record_seq_ = 1;
  GroupLog* log_ = nullptr;  // in a cluster
  std::map<int32_t, int32_t> loaded_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_GROUP_GROUP_COORDINATOR_H_
