// One consumer group's membership: Kafka's group state machine
// (GroupMetadata and the per-group half of GroupCoordinator), driven by the
// JoinGroup, SyncGroup, Heartbeat and LeaveGroup handlers and by timers.
//
//   Empty --join--> PreparingRebalance --all joined / rebalance timeout-->
//   CompletingRebalance --leader's assignment stored--> Stable
//
// A join, a leave, a member whose session expires or a leader's rejoin sends
// the group from Stable or CompletingRebalance back to PreparingRebalance;
// every member must then rejoin (heartbeats answer REBALANCE_IN_PROGRESS).
// JoinGroup answers are parked until every known member rejoined or the
// rebalance timeout (the largest member's) passed; members that did not rejoin
// are dropped. Each completed join starts a new generation. SyncGroup answers
// are parked until the leader's assignment is durable, then each member gets
// its part. Dead: the group was deleted.
//
// Offsets are not kept here (see offsets.h); this class says whether a member
// may commit them. Everything runs on the broker's event loop; callbacks run
// inside these calls or from timers and must not call back into the group.
#ifndef EXACTLY_BROKER_GROUP_GROUP_H_
#define EXACTLY_BROKER_GROUP_GROUP_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "group/clock.h"
#include "group/member.h"
#include "protocol/error_code.h"

namespace exactly::broker {

enum class GroupState {
  kEmpty,
  kPreparingRebalance,
  kCompletingRebalance,
  kStable,
  kDead,
};

// "Empty", "PreparingRebalance", ... as Kafka names them in DescribeGroups.
std::string_view GroupStateName(GroupState state);

struct GroupConfig {
  // How long the rebalance of an empty group waits for more members (Kafka's
  // group.initial.rebalance.delay.ms): one delay, then, while members keep
  // joining a new group (generation 0), one more delay at a time, all
  // within the rebalance timeout of the member that started it.
  int32_t initial_rebalance_delay_ms = 0;
};

// A group's durable form (Kafka's GroupMetadata record): what is stored when a
// generation's assignment is complete or the group became empty, and what a
// restarted broker resumes from.
struct GroupRecord {
  std::string group_id;
  std::string protocol_type;
  int32_t generation = 0;
  std::optional<std::string> protocol_name;
  std::optional<std::string> leader;
  struct Member {
    std::string id;
    std::optional<std::string> instance_id;
    std::string client_id;
    std::string client_host;
    int32_t rebalance_timeout_ms = 0;
    int32_t session_timeout_ms = 0;
    std::string metadata;  // for the group's protocol
    std::string assignment;
  };
  std::vector<Member> members;
};

class Group;

// Member ids end in a random UUID, as Kafka's do. The fuzz target reseeds the
// generator of its thread before each input, so that an input names the same
// ids every time it runs (and a found crash reproduces).
void SeedMemberIdsForFuzzing(uint64_t seed);

// Where a group goes to be persisted: the coordinator stages the record and
// calls `done` once it is durable (kNone) or could not be written.
class GroupPersistence {
 public:
  virtual ~GroupPersistence() = default;
  virtual void StoreGroup(
      const GroupRecord& record,
      absl::AnyInvocable<void(protocol::ErrorCode)> done) = 0;
};

struct JoinArgs {
  std::string member_id;  // "" for a member joining for the first time
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<MemberProtocol> protocols;
  // JoinGroup v4+: a new dynamic member first gets MEMBER_ID_REQUIRED and its
  // id, and must join again with it (KIP-394).
  bool require_known_member_id = false;
  // JoinGroup v9+: a static member's rejoin may tell the leader to skip the
  // assignment (KIP-814).
  bool supports_skip_assignment = false;
};

struct SyncArgs {
  int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> instance_id;
  std::optional<std::string> protocol_type;        // v5+
  std::optional<std::string> protocol_name;        // v5+
  std::map<std::string, std::string> assignments;  // from the leader
};

struct LeavingMember {
  std::string member_id;  // "" to remove a static member by instance id
  std::optional<std::string> instance_id;
};

struct LeaveResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::vector<protocol::ErrorCode> members;  // one per LeavingMember
};

// DescribeGroups' view of a group.
struct GroupSummary {
  std::string state;
  std::string protocol_type;
  std::string protocol;  // only while Stable
  struct Member {
    std::string id;
    std::optional<std::string> instance_id;
    std::string client_id;
    std::string client_host;
    std::string metadata;    // only while Stable
    std::string assignment;  // only while Stable
  };
  std::vector<Member> members;
};

class Group {
 public:
  Group(std::string id, const GroupConfig& config, Clock& clock,
        GroupPersistence& persistence);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  const std::string& id() const { return id_; }
  GroupState state() const { return state_; }
  int32_t generation() const { return generation_; }
  const std::optional<std::string>& protocol_type() const {
    return protocol_type_;
  }
  const std::optional<std::string>& protocol_name() const {
    return protocol_name_;
  }
  std::string leader() const { return leader_.value_or(""); }
  const std::map<std::string, std::unique_ptr<Member>>& members() const {
    return members_;
  }
  bool has_pending_members() const { return !pending_members_.empty(); }
  // A group using the consumer protocol ("consumer").
  bool is_consumer_group() const { return protocol_type_ == "consumer"; }
  // Whether some member subscribes to `topic` (true when unknown).
  bool IsSubscribedToTopic(const std::string& topic) const;

  // JoinGroup, after the coordinator checked the group id and the session
  // timeout. `done` runs now or when the rebalance completes.
  void Join(JoinArgs args, JoinCallback done);
  // SyncGroup: `done` runs now, or once the leader's assignment is stored.
  void Sync(SyncArgs args, SyncCallback done);
  protocol::ErrorCode Heartbeat(const std::string& member_id,
                                const std::optional<std::string>& instance_id,
                                int32_t generation);
  LeaveResult Leave(const std::vector<LeavingMember>& members);

  // May (member, generation) commit offsets now? Generation -1 with no member
  // is a commit from outside the group (allowed while it is Empty; always for
  // transactional commits of clients that predate KIP-447). A valid commit
  // from a member counts as its heartbeat.
  protocol::ErrorCode ValidateOffsetCommit(
      int32_t generation, const std::string& member_id,
      const std::optional<std::string>& instance_id, bool transactional);

  GroupSummary Summary() const;
  // The durable form, with `assignment` (member id -> bytes) as the members'
  // assignments (the current ones when null).
  GroupRecord Record(
      const std::map<std::string, std::string>* assignment = nullptr) const;
  // Resumes from a stored record (the group is Stable, or Empty without
  // members); members must heartbeat within their session timeout.
  void Restore(const GroupRecord& record);
  // DeleteGroups: the group is gone; every later call answers as for a dead
  // group. Only an Empty group is deleted.
  void MarkDead();
  // The coordinator moved to another broker: every JoinGroup and SyncGroup
  // still parked is answered NOT_COORDINATOR (the client finds the new one),
  // and the group stops. Its state lives on in the log the new coordinator
  // loads.
  void Unload();

 private:
  static constexpr int32_t kNewMemberJoinTimeoutMs = 5 * 60 * 1000;

  Member* Find(const std::string& member_id) const;
  protocol::ErrorCode ValidateCurrentMember(
      const std::string& member_id,
      const std::optional<std::string>& instance_id) const;
  bool SupportsProtocols(const std::string& protocol_type,
                         const std::vector<MemberProtocol>& protocols) const;
  std::string GenerateMemberId(const std::string& prefix) const;
  int32_t RebalanceTimeoutMs() const;
  bool HasAllMembersJoined() const;
  std::string SelectProtocol() const;
  std::optional<std::set<std::string>> ComputeSubscribedTopics() const;
  JoinResult CurrentGeneration(const Member& member, bool with_members) const;

  void NewMemberJoin(JoinArgs args, JoinCallback done);
  void CurrentMemberJoin(JoinArgs args, JoinCallback done);
  void AddMemberAndRebalance(const std::string& member_id, JoinArgs args,
                             JoinCallback done);
  void UpdateStaticMemberAndRebalance(const std::string& old_member_id,
                                      const std::string& new_member_id,
                                      JoinArgs args, JoinCallback done);
  void UpdateMemberAndRebalance(Member& member, JoinArgs args,
                                JoinCallback done);
  void UpdateMember(Member& member, std::vector<MemberProtocol> protocols,
                    int32_t rebalance_timeout_ms, int32_t session_timeout_ms,
                    JoinCallback done);
  Member& ReplaceStaticMember(const std::string& instance_id,
                              const std::string& old_member_id,
                              const std::string& new_member_id);
  void AddPendingMember(const std::string& member_id,
                        int32_t session_timeout_ms);
  void RemovePendingMember(const std::string& member_id);

  void MaybePrepareRebalance(std::string_view reason);
  void PrepareRebalance(std::string_view reason);
  // One step of Kafka's InitialDelayedJoin: completes the join after
  // `delay_ms` unless a member joined meanwhile and `remaining_ms` is left.
  void ArmInitialDelay(int32_t delay_ms, int32_t remaining_ms);
  void TryCompleteJoin();
  void CompleteJoin();
  void InitNextGeneration();

  void SetAndPropagateAssignment(
      const std::map<std::string, std::string>& assignment);
  void ResetAndPropagateAssignmentError(protocol::ErrorCode error);
  void PropagateAssignment(protocol::ErrorCode error);
  void RemovePendingSync(const std::string& member_id);
  void OnSyncExpired(int32_t generation);

  void ScheduleHeartbeatExpiry(Member& member, int32_t timeout_ms);
  void OnHeartbeatExpired(const std::string& member_id);

  // Both take the id by value: callers may pass a reference into a map the
  // removal erases from (static_members_, a member's own id).
  void RemoveMemberAndUpdateGroup(std::string member_id,
                                  std::string_view reason);
  // Drops a member, answering whatever it still waits for with
  // UNKNOWN_MEMBER_ID; the leader passes to a remaining member.
  void RemoveMember(std::string member_id);

  std::string id_;
  GroupConfig config_;
  Clock& clock_;
  GroupPersistence& persistence_;
  // Expired with the group, so that an answer from the store arriving after
  // the group was deleted is dropped.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);

  GroupState state_ = GroupState::kEmpty;
  int32_t generation_ = 0;
  std::optional<std::string> protocol_type_;
  std::optional<std::string> protocol_name_;
  std::optional<std::string> leader_;
  std::map<std::string, std::unique_ptr<Member>> members_;
  std::map<std::string, std::string> static_members_;  // instance -> member
  // Ids handed out with MEMBER_ID_REQUIRED, each expiring after the session
  // timeout unless the member joins with it.
  std::map<std::string, std::unique_ptr<Timer>> pending_members_;
  // Members of the current generation that have not sent SyncGroup yet.
  std::set<std::string> pending_sync_;
  std::map<std::string, int> supported_protocols_;  // name -> members
  std::optional<std::set<std::string>> subscribed_topics_;
  // The join timer is the initial delay (see ArmInitialDelay), which only
  // its expiry completes.
  bool in_initial_delay_ = false;
  // A member joined while generation 0 was preparing (Kafka's
  // newMemberAdded): the initial delay runs once more. As in Kafka, only an
  // expiring delay that still has time left clears it.
  bool new_member_added_ = false;
  std::unique_ptr<Timer> join_timer_;
  std::unique_ptr<Timer> sync_timer_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_GROUP_GROUP_H_
