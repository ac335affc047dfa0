#include "group/group.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

std::mt19937_64& MemberIdRandom() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return random;
}

}  // namespace

void SeedMemberIdsForFuzzing(uint64_t seed) { MemberIdRandom().seed(seed); }

std::string_view GroupStateName(GroupState state) {
  switch (state) {
    case GroupState::kEmpty:
      return "Empty";
    case GroupState::kPreparingRebalance:
      return "PreparingRebalance";
    case GroupState::kCompletingRebalance:
      return "CompletingRebalance";
    case GroupState::kStable:
      return "Stable";
    case GroupState::kDead:
      return "Dead";
  }
  return "Unknown";
}

Group::Group(std::string id, const GroupConfig& config, Clock& clock,
             GroupPersistence& persistence)
    : id_(std::move(id)),
      config_(config),
      clock_(clock),
      persistence_(persistence),
      join_timer_(clock.NewTimer()),
      sync_timer_(clock.NewTimer()) {}

Group::~Group() = default;

// ---- Queries ----

Member* Group::Find(const std::string& member_id) const {
  auto it = members_.find(member_id);
  return it == members_.end() ? nullptr : it->second.get();
}

ErrorCode Group::ValidateCurrentMember(
    const std::string& member_id,
    const std::optional<std::string>& instance_id) const {
  if (instance_id.has_value()) {
    auto it = static_members_.find(*instance_id);
    if (it == static_members_.end()) return ErrorCode::kUnknownMemberId;
    // Another process took this instance id over: this one is a zombie.
    if (it->second != member_id) return ErrorCode::kFencedInstanceId;
  }
  return Find(member_id) == nullptr ? ErrorCode::kUnknownMemberId
                                    : ErrorCode::kNone;
}

bool Group::SupportsProtocols(
    const std::string& protocol_type,
    const std::vector<MemberProtocol>& protocols) const {
  if (state_ == GroupState::kEmpty) {
    return !protocol_type.empty() && !protocols.empty();
  }
  if (protocol_type_ != protocol_type) return false;
  for (const MemberProtocol& p : protocols) {
    auto it = supported_protocols_.find(p.name);
    if (it != supported_protocols_.end() &&
        it->second == static_cast<int>(members_.size())) {
      return true;
    }
  }
  return false;
}

std::string Group::GenerateMemberId(const std::string& prefix) const {
  // client id (or instance id) + "-" + a random UUID, as Kafka makes them.
  std::mt19937_64& random = MemberIdRandom();
  uint64_t hi = random();
  uint64_t lo = random();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant
  char uuid[37];
  std::snprintf(uuid, sizeof uuid, "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff),
                static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return absl::StrCat(prefix, "-", uuid);
}

int32_t Group::RebalanceTimeoutMs() const {
  int32_t timeout = 0;
  for (const auto& [id, m] : members_) {
    timeout = std::max(timeout, m->rebalance_timeout_ms);
  }
  return timeout;
}

bool Group::HasAllMembersJoined() const {
  if (!pending_members_.empty()) return false;
  for (const auto& [id, m] : members_) {
    if (!m->is_awaiting_join()) return false;
  }
  return true;
}

std::string Group::SelectProtocol() const {
  // The protocols every member supports; each member votes for its favourite
  // among them, and the most votes win.
  std::set<std::string> candidates;
  for (const auto& [name, count] : supported_protocols_) {
    if (count == static_cast<int>(members_.size())) candidates.insert(name);
  }
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members_) ++votes[m->Vote(candidates)];
  auto best = std::max_element(
      votes.begin(), votes.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  return best == votes.end() ? std::string() : best->first;
}

std::optional<std::set<std::string>> Group::ComputeSubscribedTopics() const {
  if (!is_consumer_group()) return std::nullopt;
  if (members_.empty()) return std::set<std::string>();
  if (!protocol_name_.has_value()) return std::nullopt;
  std::set<std::string> topics;
  for (const auto& [id, m] : members_) {
    std::optional<std::set<std::string>> member_topics =
        ParseConsumerSubscription(m->Metadata(*protocol_name_));
    if (!member_topics.has_value()) return std::nullopt;
    topics.insert(member_topics->begin(), member_topics->end());
  }
  return topics;
}

bool Group::IsSubscribedToTopic(const std::string& topic) const {
  return !subscribed_topics_.has_value() || subscribed_topics_->contains(topic);
}

JoinResult Group::CurrentGeneration(const Member& member,
                                    bool with_members) const {
  JoinResult r;
  r.member_id = member.id;
  r.generation_id = generation_;
  r.protocol_type = protocol_type_;
  r.protocol_name = protocol_name_;
  r.leader = leader();
  if (with_members) {
    for (const auto& [id, m] : members_) {
      r.members.push_back(
          {id, m->instance_id,
           protocol_name_ ? m->Metadata(*protocol_name_) : std::string()});
    }
  }
  return r;
}

GroupSummary Group::Summary() const {
  GroupSummary s;
  s.state = std::string(GroupStateName(state_));
  s.protocol_type = protocol_type_.value_or("");
  const bool stable = state_ == GroupState::kStable && protocol_name_;
  if (stable) s.protocol = *protocol_name_;
  for (const auto& [id, m] : members_) {
    GroupSummary::Member& sm = s.members.emplace_back();
    sm.id = id;
    sm.instance_id = m->instance_id;
    sm.client_id = m->client_id;
    sm.client_host = m->client_host;
    if (stable) {
      sm.metadata = m->Metadata(*protocol_name_);
      sm.assignment = m->assignment;
    }
  }
  return s;
}

GroupRecord Group::Record(
    const std::map<std::string, std::string>* assignment) const {
  GroupRecord r;
  r.group_id = id_;
  r.protocol_type = protocol_type_.value_or("");
  r.generation = generation_;
  r.protocol_name = protocol_name_;
  r.leader = leader_;
  for (const auto& [id, m] : members_) {
    GroupRecord::Member& rm = r.members.emplace_back();
    rm.id = id;
    rm.instance_id = m->instance_id;
    rm.client_id = m->client_id;
    rm.client_host = m->client_host;
    rm.rebalance_timeout_ms = m->rebalance_timeout_ms;
    rm.session_timeout_ms = m->session_timeout_ms;
    if (protocol_name_) rm.metadata = m->Metadata(*protocol_name_);
    if (assignment == nullptr) {
      rm.assignment = m->assignment;
    } else if (auto it = assignment->find(id); it != assignment->end()) {
      rm.assignment = it->second;
    }
  }
  return r;
}

void Group::Restore(const GroupRecord& record) {
  generation_ = record.generation;
  protocol_type_ = record.protocol_type.empty()
                       ? std::nullopt
                       : std::optional<std::string>(record.protocol_type);
  protocol_name_ = record.protocol_name;
  leader_ = record.leader;
  for (const GroupRecord::Member& rm : record.members) {
    auto m = std::make_unique<Member>();
    m->id = rm.id;
    m->instance_id = rm.instance_id;
    m->client_id = rm.client_id;
    m->client_host = rm.client_host;
    m->rebalance_timeout_ms = rm.rebalance_timeout_ms;
    m->session_timeout_ms = rm.session_timeout_ms;
    m->protocol_type = record.protocol_type;
    if (protocol_name_) m->protocols = {{*protocol_name_, rm.metadata}};
    m->assignment = rm.assignment;
    m->heartbeat_timer = clock_.NewTimer();
    for (const MemberProtocol& p : m->protocols) ++supported_protocols_[p.name];
    if (m->instance_id) static_members_[*m->instance_id] = m->id;
    members_[rm.id] = std::move(m);
  }
  if (members_.empty()) {
    leader_.reset();
    state_ = GroupState::kEmpty;
  } else {
    if (!leader_ || Find(*leader_) == nullptr)
      leader_ = members_.begin()->first;
    state_ = GroupState::kStable;
  }
  subscribed_topics_ = ComputeSubscribedTopics();
  for (auto& [id, m] : members_) {
    ScheduleHeartbeatExpiry(*m, m->session_timeout_ms);
  }
}

void Group::MarkDead() {
  state_ = GroupState::kDead;
  join_timer_->Cancel();
  sync_timer_->Cancel();
  pending_members_.clear();
  pending_sync_.clear();
}

void Group::Unload() {
  for (auto& [id, m] : members_) {
    if (m->heartbeat_timer) m->heartbeat_timer->Cancel();
    if (m->awaiting_join) {
      JoinCallback join = std::move(m->awaiting_join);
      m->awaiting_join = nullptr;
      join(JoinResult::Error(ErrorCode::kNotCoordinator, id));
    }
    if (m->awaiting_sync) {
      SyncCallback sync = std::move(m->awaiting_sync);
      m->awaiting_sync = nullptr;
      sync(SyncResult::Error(ErrorCode::kNotCoordinator));
    }
  }
  MarkDead();
}

// ---- JoinGroup ----

void Group::Join(JoinArgs args, JoinCallback done) {
  if (args.member_id.empty()) {
    NewMemberJoin(std::move(args), std::move(done));
  } else {
    CurrentMemberJoin(std::move(args), std::move(done));
  }
  if (state_ == GroupState::kPreparingRebalance) TryCompleteJoin();
}

void Group::NewMemberJoin(JoinArgs args, JoinCallback done) {
  if (state_ == GroupState::kDead) {
    done(JoinResult::Error(ErrorCode::kCoordinatorNotAvailable, ""));
    return;
  }
  if (!SupportsProtocols(args.protocol_type, args.protocols)) {
    done(JoinResult::Error(ErrorCode::kInconsistentGroupProtocol, ""));
    return;
  }
  std::string new_id =
      GenerateMemberId(args.instance_id ? *args.instance_id : args.client_id);
  if (args.instance_id.has_value()) {
    auto it = static_members_.find(*args.instance_id);
    if (it != static_members_.end()) {
      std::string old_id = it->second;
      UpdateStaticMemberAndRebalance(old_id, new_id, std::move(args),
                                     std::move(done));
    } else {
      AddMemberAndRebalance(new_id, std::move(args), std::move(done));
    }
  } else if (args.require_known_member_id) {
    AddPendingMember(new_id, args.session_timeout_ms);
    done(JoinResult::Error(ErrorCode::kMemberIdRequired, new_id));
  } else {
    AddMemberAndRebalance(new_id, std::move(args), std::move(done));
  }
}

void Group::CurrentMemberJoin(JoinArgs args, JoinCallback done) {
  const std::string member_id = args.member_id;
  if (state_ == GroupState::kDead) {
    done(JoinResult::Error(ErrorCode::kCoordinatorNotAvailable, member_id));
    return;
  }
  if (!SupportsProtocols(args.protocol_type, args.protocols)) {
    done(JoinResult::Error(ErrorCode::kInconsistentGroupProtocol, member_id));
    return;
  }
  if (pending_members_.contains(member_id) && !args.instance_id) {
    AddMemberAndRebalance(member_id, std::move(args), std::move(done));
    return;
  }
  if (ErrorCode e = ValidateCurrentMember(member_id, args.instance_id);
      e != ErrorCode::kNone) {
    done(JoinResult::Error(e, member_id));
    return;
  }
  Member& member = *Find(member_id);
  switch (state_) {
    case GroupState::kPreparingRebalance:
      UpdateMemberAndRebalance(member, std::move(args), std::move(done));
      return;
    case GroupState::kCompletingRebalance:
      if (member.Matches(args.protocols)) {
        // The member lost the JoinGroup answer: the same one again.
        done(CurrentGeneration(member, leader_ == member_id));
      } else {
        UpdateMemberAndRebalance(member, std::move(args), std::move(done));
      }
      return;
    case GroupState::kStable:
      // The leader rejoins to make the group reassign (e.g. its topics
      // changed); a follower only when its subscription changed.
      if (leader_ == member_id || !member.Matches(args.protocols)) {
        UpdateMemberAndRebalance(member, std::move(args), std::move(done));
      } else {
        done(CurrentGeneration(member, false));
      }
      return;
    case GroupState::kEmpty:
    case GroupState::kDead:
      done(JoinResult::Error(ErrorCode::kUnknownMemberId, member_id));
      return;
  }
}

void Group::AddMemberAndRebalance(const std::string& member_id, JoinArgs args,
                                  JoinCallback done) {
  auto owned = std::make_unique<Member>();
  Member& m = *owned;
  m.id = member_id;
  m.instance_id = args.instance_id;
  m.client_id = args.client_id;
  m.client_host = args.client_host;
  m.rebalance_timeout_ms = args.rebalance_timeout_ms;
  m.session_timeout_ms = args.session_timeout_ms;
  m.protocol_type = args.protocol_type;
  m.protocols = std::move(args.protocols);
  m.is_new = true;
  m.heartbeat_timer = clock_.NewTimer();
  m.awaiting_join = std::move(done);
  // A newcomer while a new group waits: its initial delay runs once more.
  if (state_ == GroupState::kPreparingRebalance && generation_ == 0) {
    new_member_added_ = true;
  }
  if (members_.empty()) protocol_type_ = m.protocol_type;
  if (!leader_) leader_ = member_id;
  for (const MemberProtocol& p : m.protocols) ++supported_protocols_[p.name];
  if (m.instance_id) static_members_[*m.instance_id] = member_id;
  pending_members_.erase(member_id);
  members_[member_id] = std::move(owned);
  // A new member cannot heartbeat before its join completes; should it go
  // away while waiting, it is dropped after this long.
  ScheduleHeartbeatExpiry(m, kNewMemberJoinTimeoutMs);
  MaybePrepareRebalance(absl::StrCat("adding member ", member_id));
}

void Group::UpdateStaticMemberAndRebalance(const std::string& old_member_id,
                                           const std::string& new_member_id,
                                           JoinArgs args, JoinCallback done) {
  const std::string instance_id = *args.instance_id;
  const std::string current_leader = leader();
  Member& m = ReplaceStaticMember(instance_id, old_member_id, new_member_id);
  ScheduleHeartbeatExpiry(m, m.session_timeout_ms);
  std::vector<MemberProtocol> old_protocols = m.protocols;
  const int32_t old_rebalance_timeout = m.rebalance_timeout_ms;
  const int32_t old_session_timeout = m.session_timeout_ms;
  UpdateMember(m, std::move(args.protocols), args.rebalance_timeout_ms,
               args.session_timeout_ms, std::move(done));
  switch (state_) {
    case GroupState::kStable: {
      if (SelectProtocol() != protocol_name_.value_or("")) {
        MaybePrepareRebalance(absl::StrCat("static member ", instance_id,
                                           " rejoined with other protocols"));
        return;
      }
      // The same member came back (a restart): it takes its old place and
      // assignment without a rebalance, once the new member id is stored.
      persistence_.StoreGroup(
          Record(),
          [this, alive = std::weak_ptr<int>(alive_), instance_id, old_member_id,
           new_member_id, current_leader,
           old_protocols = std::move(old_protocols), old_rebalance_timeout,
           old_session_timeout,
           skip = args.supports_skip_assignment](ErrorCode error) mutable {
            if (alive.expired()) return;
            Member* member = Find(new_member_id);
            // Gone, or caught up in a rebalance that started meanwhile (which
            // answers its join).
            if (member == nullptr || !member->is_awaiting_join() ||
                state_ != GroupState::kStable) {
              return;
            }
            if (error != ErrorCode::kNone) {
              LogWarning(
                  "group ", id_, ": storing static member ", instance_id,
                  " failed: ", std::string(protocol::ErrorCodeName(error)));
              JoinCallback callback = std::move(member->awaiting_join);
              member->awaiting_join = nullptr;
              UpdateMember(*member, std::move(old_protocols),
                           old_rebalance_timeout, old_session_timeout, nullptr);
              Member& old = ReplaceStaticMember(instance_id, new_member_id,
                                                old_member_id);
              ScheduleHeartbeatExpiry(old, old.session_timeout_ms);
              JoinResult r = JoinResult::Error(error, "");
              r.generation_id = generation_;
              r.protocol_type = protocol_type_;
              r.protocol_name = protocol_name_;
              r.leader = current_leader;
              callback(std::move(r));
              return;
            }
            JoinResult r;
            if (skip) {
              // v9+: the leader is told it leads, and to keep the current
              // assignment rather than compute one a stable group would
              // ignore.
              const bool is_leader = leader_ == new_member_id;
              r = CurrentGeneration(*member, is_leader);
              r.skip_assignment = is_leader;
            } else {
              // Before v9 the old leader id is returned, which this member
              // (with its new id) does not take for its own: it syncs as a
              // follower and gets its stored assignment.
              r = CurrentGeneration(*member, false);
              r.leader = current_leader;
            }
            JoinCallback callback = std::move(member->awaiting_join);
            member->awaiting_join = nullptr;
            callback(std::move(r));
          });
      return;
    }
    case GroupState::kCompletingRebalance:
      // The old member id may already be in the leader's hands: rebalance so
      // that the assignment names the new one.
      PrepareRebalance(absl::StrCat("static member ", instance_id,
                                    " rejoined during the sync"));
      return;
    case GroupState::kPreparingRebalance:
      return;  // it waits for the rebalance like everyone else
    case GroupState::kEmpty:
    case GroupState::kDead:
      return;  // unreachable: a static member exists
  }
}

void Group::UpdateMemberAndRebalance(Member& member, JoinArgs args,
                                     JoinCallback done) {
  const std::string member_id = member.id;
  UpdateMember(member, std::move(args.protocols), args.rebalance_timeout_ms,
               args.session_timeout_ms, std::move(done));
  MaybePrepareRebalance(absl::StrCat("member ", member_id, " rejoined"));
}

void Group::UpdateMember(Member& member, std::vector<MemberProtocol> protocols,
                         int32_t rebalance_timeout_ms,
                         int32_t session_timeout_ms, JoinCallback done) {
  for (const MemberProtocol& p : member.protocols) {
    if (--supported_protocols_[p.name] == 0) supported_protocols_.erase(p.name);
  }
  member.protocols = std::move(protocols);
  for (const MemberProtocol& p : member.protocols) {
    ++supported_protocols_[p.name];
  }
  member.rebalance_timeout_ms = rebalance_timeout_ms;
  member.session_timeout_ms = session_timeout_ms;
  if (member.awaiting_join && done) {
    // A second JoinGroup while the first is parked: the first is answered
    // (Kafka drops it; a dropped answer here would close the connection).
    JoinCallback old = std::move(member.awaiting_join);
    old(JoinResult::Error(ErrorCode::kRebalanceInProgress, member.id));
  }
  member.awaiting_join = std::move(done);
}

Member& Group::ReplaceStaticMember(const std::string& instance_id,
                                   const std::string& old_member_id,
                                   const std::string& new_member_id) {
  auto node = members_.extract(old_member_id);
  Member& m = *node.mapped();
  // Whoever still waits with the old id is a zombie now.
  if (m.awaiting_join) {
    JoinCallback join = std::move(m.awaiting_join);
    m.awaiting_join = nullptr;
    join(JoinResult::Error(ErrorCode::kFencedInstanceId, old_member_id));
  }
  if (m.awaiting_sync) {
    SyncCallback sync = std::move(m.awaiting_sync);
    m.awaiting_sync = nullptr;
    sync(SyncResult::Error(ErrorCode::kFencedInstanceId));
  }
  m.id = new_member_id;
  node.key() = new_member_id;
  members_.insert(std::move(node));
  if (leader_ == old_member_id) leader_ = new_member_id;
  if (pending_sync_.erase(old_member_id) > 0) {
    pending_sync_.insert(new_member_id);
  }
  static_members_[instance_id] = new_member_id;
  return *Find(new_member_id);
}

void Group::AddPendingMember(const std::string& member_id,
                             int32_t session_timeout_ms) {
  std::unique_ptr<Timer>& timer = pending_members_[member_id];
  timer = clock_.NewTimer();
  timer->Arm(session_timeout_ms, [this, member_id] {
    LogInfo("group ", id_, ": pending member ", member_id,
            " did not join within its session timeout");
    RemovePendingMember(member_id);
  });
}

void Group::RemovePendingMember(const std::string& member_id) {
  pending_members_.erase(member_id);
  if (state_ == GroupState::kPreparingRebalance) TryCompleteJoin();
}

// ---- Rebalance ----

void Group::MaybePrepareRebalance(std::string_view reason) {
  if (state_ == GroupState::kStable ||
      state_ == GroupState::kCompletingRebalance ||
      state_ == GroupState::kEmpty) {
    PrepareRebalance(reason);
  }
}

void Group::PrepareRebalance(std::string_view reason) {
  if (state_ == GroupState::kCompletingRebalance) {
    ResetAndPropagateAssignmentError(ErrorCode::kRebalanceInProgress);
  }
  pending_sync_.clear();
  sync_timer_->Cancel();
  const bool was_empty = state_ == GroupState::kEmpty;
  LogInfo("group ", id_, ": preparing to rebalance in state ",
          std::string(GroupStateName(state_)), " with old generation ",
          generation_, " (", std::string(reason), ")");
  state_ = GroupState::kPreparingRebalance;
  if (was_empty) {
    // The first members of an empty group wait a little for the others, so
    // that a group starting up does not rebalance once per member: Kafka's
    // InitialDelayedJoin, with the rebalance timeout of the group as it is
    // now (the member that came first).
    in_initial_delay_ = true;
    const int32_t delay = config_.initial_rebalance_delay_ms;
    ArmInitialDelay(delay, std::max(RebalanceTimeoutMs() - delay, 0));
  } else {
    in_initial_delay_ = false;
    join_timer_->Arm(RebalanceTimeoutMs(), [this] { CompleteJoin(); });
    TryCompleteJoin();
  }
}

void Group::ArmInitialDelay(int32_t delay_ms, int32_t remaining_ms) {
  join_timer_->Arm(delay_ms, [this, delay_ms, remaining_ms] {
    if (new_member_added_ && remaining_ms != 0) {
      // Someone joined during this delay: wait another whole delay, or what
      // is left of the rebalance timeout if that is shorter. (The first
      // delay runs in full even when it is longer than the rebalance
      // timeout.)
      new_member_added_ = false;
      ArmInitialDelay(
          std::min(config_.initial_rebalance_delay_ms, remaining_ms),
          std::max(remaining_ms - delay_ms, 0));
    } else {
      CompleteJoin();
    }
  });
}

void Group::TryCompleteJoin() {
  if (state_ == GroupState::kPreparingRebalance && !in_initial_delay_ &&
      HasAllMembersJoined()) {
    CompleteJoin();
  }
}

void Group::CompleteJoin() {
  join_timer_->Cancel();
  in_initial_delay_ = false;
  if (state_ != GroupState::kPreparingRebalance) return;
  // Dynamic members that did not rejoin in time are out; static ones keep
  // their place (their session timeout decides).
  std::vector<std::string> gone;
  for (const auto& [id, m] : members_) {
    if (!m->is_awaiting_join() && !m->is_static()) gone.push_back(id);
  }
  if (!gone.empty()) {
    LogInfo("group ", id_, ": removing members that did not rejoin: ",
            absl::StrJoin(gone, ", "));
  }
  for (const std::string& id : gone) RemoveMember(id);

  // Make sure the leader is one of the members that rejoined.
  const Member* current = leader_ ? Find(*leader_) : nullptr;
  bool have_leader = current != nullptr && current->is_awaiting_join();
  for (auto it = members_.begin(); !have_leader && it != members_.end(); ++it) {
    if (it->second->is_awaiting_join()) {
      leader_ = it->first;
      have_leader = true;
    }
  }
  if (!have_leader && !members_.empty()) {
    // Only static members that have not rejoined are left: wait for them
    // (or for their session timeouts) another rebalance timeout.
    LogWarning("group ", id_, ": no member rejoined; waiting again");
    join_timer_->Arm(RebalanceTimeoutMs(), [this] { CompleteJoin(); });
    return;
  }
  InitNextGeneration();
  if (state_ == GroupState::kEmpty) {
    LogInfo("group ", id_, " is empty at generation ", generation_);
    persistence_.StoreGroup(Record(), [id = id_](ErrorCode error) {
      if (error != ErrorCode::kNone) {
        LogWarning("group ", id, ": storing the empty group failed: ",
                   std::string(protocol::ErrorCodeName(error)));
      }
    });
    return;
  }
  LogInfo("group ", id_, " stabilized at generation ", generation_, " with ",
          members_.size(), " member(s), protocol ", protocol_name_.value_or(""),
          ", leader ", leader());
  for (auto& [id, m] : members_) {
    if (m->awaiting_join) {
      JoinCallback done = std::move(m->awaiting_join);
      m->awaiting_join = nullptr;
      done(CurrentGeneration(*m, leader_ == id));
    }
    ScheduleHeartbeatExpiry(*m, m->session_timeout_ms);
    m->is_new = false;
    pending_sync_.insert(id);
  }
  // Members that never send SyncGroup are dropped after the rebalance
  // timeout, so that the others do not wait for them forever.
  sync_timer_->Arm(RebalanceTimeoutMs(), [this, generation = generation_] {
    OnSyncExpired(generation);
  });
}

void Group::InitNextGeneration() {
  ++generation_;
  if (!members_.empty()) {
    protocol_name_ = SelectProtocol();
    state_ = GroupState::kCompletingRebalance;
  } else {
    protocol_name_.reset();
    state_ = GroupState::kEmpty;
  }
  subscribed_topics_ = ComputeSubscribedTopics();
  pending_sync_.clear();
}

// ---- SyncGroup ----

void Group::Sync(SyncArgs args, SyncCallback done) {
  if (state_ == GroupState::kDead) {
    done(SyncResult::Error(ErrorCode::kCoordinatorNotAvailable));
    return;
  }
  if (ErrorCode e = ValidateCurrentMember(args.member_id, args.instance_id);
      e != ErrorCode::kNone) {
    done(SyncResult::Error(e));
    return;
  }
  if (args.generation != generation_) {
    done(SyncResult::Error(ErrorCode::kIllegalGeneration));
    return;
  }
  if ((args.protocol_type && args.protocol_type != protocol_type_) ||
      (args.protocol_name && args.protocol_name != protocol_name_)) {
    done(SyncResult::Error(ErrorCode::kInconsistentGroupProtocol));
    return;
  }
  Member& member = *Find(args.member_id);
  switch (state_) {
    case GroupState::kEmpty:
      done(SyncResult::Error(ErrorCode::kUnknownMemberId));
      return;
    case GroupState::kPreparingRebalance:
      done(SyncResult::Error(ErrorCode::kRebalanceInProgress));
      return;
    case GroupState::kCompletingRebalance: {
      if (member.awaiting_sync) {
        SyncCallback old = std::move(member.awaiting_sync);
        old(SyncResult::Error(ErrorCode::kRebalanceInProgress));
      }
      member.awaiting_sync = std::move(done);
      RemovePendingSync(member.id);
      if (leader_ != member.id) return;  // parked until the leader's arrives
      LogInfo("group ", id_, ": assignment from leader ", member.id,
              " for generation ", generation_);
      std::map<std::string, std::string> assignment;
      for (const auto& [id, m] : members_) {
        auto it = args.assignments.find(id);
        assignment[id] = it == args.assignments.end() ? "" : it->second;
      }
      persistence_.StoreGroup(
          Record(&assignment),
          [this, alive = std::weak_ptr<int>(alive_), generation = generation_,
           assignment](ErrorCode error) {
            if (alive.expired()) return;
            // A join or leave may have started another rebalance meanwhile.
            if (state_ != GroupState::kCompletingRebalance ||
                generation_ != generation) {
              return;
            }
            if (error != ErrorCode::kNone) {
              ResetAndPropagateAssignmentError(error);
              MaybePrepareRebalance("storing the assignment failed");
              return;
            }
            SetAndPropagateAssignment(assignment);
            state_ = GroupState::kStable;
          });
      return;
    }
    case GroupState::kStable: {
      RemovePendingSync(member.id);
      SyncResult r;
      r.protocol_type = protocol_type_;
      r.protocol_name = protocol_name_;
      r.assignment = member.assignment;
      done(std::move(r));
      ScheduleHeartbeatExpiry(member, member.session_timeout_ms);
      return;
    }
    case GroupState::kDead:
      return;  // handled above
  }
}

void Group::SetAndPropagateAssignment(
    const std::map<std::string, std::string>& assignment) {
  for (auto& [id, m] : members_) {
    auto it = assignment.find(id);
    m->assignment = it == assignment.end() ? "" : it->second;
  }
  PropagateAssignment(ErrorCode::kNone);
}

void Group::ResetAndPropagateAssignmentError(ErrorCode error) {
  for (auto& [id, m] : members_) m->assignment.clear();
  PropagateAssignment(error);
}

void Group::PropagateAssignment(ErrorCode error) {
  for (auto& [id, m] : members_) {
    if (!m->awaiting_sync) continue;
    SyncResult r;
    r.error = error;
    if (error == ErrorCode::kNone) {
      r.protocol_type = protocol_type_;
      r.protocol_name = protocol_name_;
      r.assignment = m->assignment;
    }
    SyncCallback done = std::move(m->awaiting_sync);
    m->awaiting_sync = nullptr;
    done(std::move(r));
    // The session restarts now: the member may have waited for the leader
    // longer than its session timeout.
    ScheduleHeartbeatExpiry(*m, m->session_timeout_ms);
  }
}

void Group::RemovePendingSync(const std::string& member_id) {
  pending_sync_.erase(member_id);
  if (pending_sync_.empty()) sync_timer_->Cancel();
}

void Group::OnSyncExpired(int32_t generation) {
  if (generation != generation_ || pending_sync_.empty()) return;
  if (state_ != GroupState::kCompletingRebalance &&
      state_ != GroupState::kStable) {
    return;
  }
  std::vector<std::string> gone(pending_sync_.begin(), pending_sync_.end());
  LogInfo("group ", id_,
          ": removing members that did not sync: ", absl::StrJoin(gone, ", "));
  for (const std::string& id : gone) RemoveMember(id);
  PrepareRebalance("members did not sync in time");
}

// ---- Heartbeat, LeaveGroup, offset commits ----

ErrorCode Group::Heartbeat(const std::string& member_id,
                           const std::optional<std::string>& instance_id,
                           int32_t generation) {
  if (state_ == GroupState::kDead) return ErrorCode::kCoordinatorNotAvailable;
  if (ErrorCode e = ValidateCurrentMember(member_id, instance_id);
      e != ErrorCode::kNone) {
    return e;
  }
  if (generation != generation_) return ErrorCode::kIllegalGeneration;
  Member& member = *Find(member_id);
  switch (state_) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return ErrorCode::kUnknownMemberId;
    case GroupState::kCompletingRebalance:
      // A member may heartbeat between its JoinGroup and SyncGroup answers.
      ScheduleHeartbeatExpiry(member, member.session_timeout_ms);
      return ErrorCode::kNone;
    case GroupState::kPreparingRebalance:
      ScheduleHeartbeatExpiry(member, member.session_timeout_ms);
      return ErrorCode::kRebalanceInProgress;
    case GroupState::kStable:
      ScheduleHeartbeatExpiry(member, member.session_timeout_ms);
      return ErrorCode::kNone;
  }
  return ErrorCode::kNone;
}

LeaveResult Group::Leave(const std::vector<LeavingMember>& leaving) {
  LeaveResult result;
  if (state_ == GroupState::kDead) {
    result.error = ErrorCode::kCoordinatorNotAvailable;
    return result;
  }
  for (const LeavingMember& l : leaving) {
    ErrorCode error = ErrorCode::kNone;
    if (l.member_id.empty()) {
      // An admin removing a static member by its instance id.
      auto it = l.instance_id ? static_members_.find(*l.instance_id)
                              : static_members_.end();
      if (it == static_members_.end()) {
        error = ErrorCode::kUnknownMemberId;
      } else {
        // Copied into the call: removing the member erases `it`.
        RemoveMemberAndUpdateGroup(it->second, "left the group");
      }
    } else if (pending_members_.contains(l.member_id)) {
      RemovePendingMember(l.member_id);
    } else {
      error = ValidateCurrentMember(l.member_id, l.instance_id);
      if (error == ErrorCode::kNone) {
        RemoveMemberAndUpdateGroup(l.member_id, "left the group");
      }
    }
    result.members.push_back(error);
  }
  return result;
}

ErrorCode Group::ValidateOffsetCommit(
    int32_t generation, const std::string& member_id,
    const std::optional<std::string>& instance_id, bool transactional) {
  if (state_ == GroupState::kDead) return ErrorCode::kCoordinatorNotAvailable;
  // A commit from outside the group (admin tools, assign()-only consumers):
  // fine while nobody is in the group.
  if (generation < 0 && state_ == GroupState::kEmpty) return ErrorCode::kNone;
  if (generation >= 0 || !member_id.empty() || instance_id.has_value()) {
    if (ErrorCode e = ValidateCurrentMember(member_id, instance_id);
        e != ErrorCode::kNone) {
      return e;
    }
    if (generation != generation_) return ErrorCode::kIllegalGeneration;
  } else if (!transactional) {
    // Only members commit while the group has members. Transactional commits
    // before KIP-447 (TxnOffsetCommit < v3) carry no member and pass.
    return ErrorCode::kUnknownMemberId;
  } else {
    return ErrorCode::kNone;
  }
  if (transactional) return ErrorCode::kNone;
  Member* member = Find(member_id);
  switch (state_) {
    case GroupState::kStable:
    case GroupState::kPreparingRebalance:
      // Still allowed while rebalancing: the member learns about the
      // rebalance from its next heartbeat, and may commit what it processed.
      ScheduleHeartbeatExpiry(*member, member->session_timeout_ms);
      return ErrorCode::kNone;
    case GroupState::kCompletingRebalance:
      // It has the new generation but not yet its assignment.
      return ErrorCode::kRebalanceInProgress;
    case GroupState::kEmpty:
    case GroupState::kDead:
      return ErrorCode::kNone;
  }
  return ErrorCode::kNone;
}

// ---- Sessions and removal ----

void Group::ScheduleHeartbeatExpiry(Member& member, int32_t timeout_ms) {
  member.heartbeat_timer->Arm(
      timeout_ms, [this, id = member.id] { OnHeartbeatExpired(id); });
}

void Group::OnHeartbeatExpired(const std::string& member_id) {
  if (state_ == GroupState::kDead) return;
  Member* member = Find(member_id);
  if (member == nullptr) return;
  // A known member waiting for its JoinGroup or SyncGroup answer is not
  // expected to heartbeat; its session restarts when it gets the answer.
  if (!member->is_new &&
      (member->is_awaiting_join() || member->is_awaiting_sync())) {
    return;
  }
  LogInfo("group ", id_, ": member ", member_id,
          " missed its session timeout; removing it");
  RemoveMemberAndUpdateGroup(member_id, "session timeout");
}

void Group::RemoveMemberAndUpdateGroup(std::string member_id,
                                       std::string_view reason) {
  RemoveMember(member_id);
  switch (state_) {
    case GroupState::kDead:
    case GroupState::kEmpty:
      return;
    case GroupState::kStable:
    case GroupState::kCompletingRebalance:
      MaybePrepareRebalance(absl::StrCat("removing member ", member_id, ": ",
                                         std::string(reason)));
      return;
    case GroupState::kPreparingRebalance:
      TryCompleteJoin();
      return;
  }
}

void Group::RemoveMember(std::string member_id) {
  auto it = members_.find(member_id);
  if (it == members_.end()) return;
  std::unique_ptr<Member> m = std::move(it->second);
  members_.erase(it);
  if (m->awaiting_join) {
    JoinCallback join = std::move(m->awaiting_join);
    m->awaiting_join = nullptr;
    join(JoinResult::Error(ErrorCode::kUnknownMemberId, ""));
  }
  if (m->awaiting_sync) {
    SyncCallback sync = std::move(m->awaiting_sync);
    m->awaiting_sync = nullptr;
    sync(SyncResult::Error(ErrorCode::kUnknownMemberId));
  }
  for (const MemberProtocol& p : m->protocols) {
    if (--supported_protocols_[p.name] == 0) supported_protocols_.erase(p.name);
  }
  if (m->instance_id) {
    auto s = static_members_.find(*m->instance_id);
    if (s != static_members_.end() && s->second == member_id) {
      static_members_.erase(s);
    }
  }
  if (leader_ == member_id) {
    leader_ = members_.empty()
                  ? std::nullopt
                  : std::optional<std::string>(members_.begin()->first);
  }
  pending_sync_.erase(member_id);
  // `m` (and its heartbeat timer) goes here; this may be that timer's own
  // callback, which keeps running on its own copy.
}

}  // namespace exactly::broker
