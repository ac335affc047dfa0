// The group state machine alone (group/group.h), on a manual clock: joins,
// generations, the leader's assignment, rebalance and session timeouts,
// static membership, and who may commit offsets when.
#include "group/group.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/group/group_fixture.h"

namespace exactly::broker {
namespace {

using ::exactly::broker::testing::Answers;
using ::exactly::broker::testing::GroupTest;
using ::exactly::broker::testing::kRebalanceMs;
using ::exactly::broker::testing::kSessionMs;
using ::exactly::broker::testing::Subscription;
using protocol::ErrorCode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

TEST_F(GroupTest, FirstMemberGetsItsIdThenLeadsGenerationOne) {
  Answers a;
  std::string id = JoinNew(&a);
  // Parked: the first rebalance of an empty group waits out the initial
  // delay, even when it is 0.
  EXPECT_FALSE(a.join.has_value());
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  clock_.Advance(0);
  ASSERT_TRUE(a.join.has_value());
  const JoinResult& j = *a.join;
  EXPECT_EQ(j.error, ErrorCode::kNone);
  EXPECT_EQ(j.member_id, id);
  EXPECT_EQ(j.generation_id, 1);
  EXPECT_EQ(j.leader, id);
  EXPECT_EQ(j.protocol_type, "consumer");
  EXPECT_EQ(j.protocol_name, "range");
  ASSERT_EQ(j.members.size(), 1u);
  EXPECT_EQ(j.members[0].member_id, id);
  EXPECT_EQ(j.members[0].metadata, Subscription({"orders"}));
  EXPECT_EQ(group_.state(), GroupState::kCompletingRebalance);

  Sync(id, 1, &a, {{id, "my-partitions"}});
  ASSERT_TRUE(a.sync.has_value());
  EXPECT_EQ(a.sync->error, ErrorCode::kNone);
  EXPECT_EQ(a.sync->assignment, "my-partitions");
  EXPECT_EQ(group_.state(), GroupState::kStable);
  // The assignment was persisted before it was handed out.
  ASSERT_FALSE(persistence_.stored.empty());
  const GroupRecord& r = persistence_.stored.back();
  EXPECT_EQ(r.generation, 1);
  ASSERT_EQ(r.members.size(), 1u);
  EXPECT_EQ(r.members[0].assignment, "my-partitions");
}

TEST_F(GroupTest, SecondMemberTriggersRebalanceAndLeaderAssignsBoth) {
  std::string a_id = StableWithOneMember();
  Answers a, b;
  std::string b_id = JoinNew(&b);
  EXPECT_FALSE(b.join.has_value()) << "waits for A to rejoin";
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  // A hears about the rebalance from its heartbeat and rejoins.
  EXPECT_EQ(group_.Heartbeat(a_id, std::nullopt, 1),
            ErrorCode::kRebalanceInProgress);
  Join(Args(a_id), &a);
  ASSERT_TRUE(a.join.has_value());
  ASSERT_TRUE(b.join.has_value());
  EXPECT_EQ(a.join->generation_id, 2);
  EXPECT_EQ(b.join->generation_id, 2);
  EXPECT_EQ(a.join->leader, a_id);
  EXPECT_EQ(b.join->leader, a_id);
  EXPECT_EQ(a.join->members.size(), 2u);
  EXPECT_THAT(b.join->members, IsEmpty()) << "only the leader gets members";

  // The follower's sync waits for the leader's.
  Sync(b_id, 2, &b);
  EXPECT_FALSE(b.sync.has_value());
  Sync(a_id, 2, &a, {{a_id, "p0,p1"}, {b_id, "p2,p3"}});
  ASSERT_TRUE(a.sync.has_value());
  ASSERT_TRUE(b.sync.has_value());
  EXPECT_EQ(a.sync->assignment, "p0,p1");
  EXPECT_EQ(b.sync->assignment, "p2,p3");
  EXPECT_EQ(group_.state(), GroupState::kStable);
  EXPECT_EQ(group_.Heartbeat(a_id, std::nullopt, 2), ErrorCode::kNone);
  EXPECT_EQ(group_.Heartbeat(b_id, std::nullopt, 2), ErrorCode::kNone);
  // The old generation is over.
  EXPECT_EQ(group_.Heartbeat(a_id, std::nullopt, 1),
            ErrorCode::kIllegalGeneration);
  EXPECT_EQ(group_.Heartbeat("nobody", std::nullopt, 2),
            ErrorCode::kUnknownMemberId);
}

TEST_F(GroupTest, MemberThatDoesNotRejoinIsDroppedAfterRebalanceTimeout) {
  std::string a_id = StableWithOneMember();
  Answers a, b, c;
  std::string b_id = JoinNew(&b);
  Join(Args(a_id), &a);
  Sync(a_id, 2, &a, {{a_id, "x"}, {b_id, "y"}});
  Sync(b_id, 2, &b);
  ASSERT_EQ(group_.state(), GroupState::kStable);

  std::string c_id = JoinNew(&c);
  Join(Args(a_id), &a);  // A rejoins; B keeps heartbeating but never rejoins
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(5000);
    EXPECT_EQ(group_.Heartbeat(b_id, std::nullopt, 2),
              ErrorCode::kRebalanceInProgress);
  }
  clock_.Advance(kRebalanceMs - 25000 - 1);
  EXPECT_FALSE(c.join.has_value());
  clock_.Advance(1);
  ASSERT_TRUE(c.join.has_value());
  EXPECT_EQ(c.join->generation_id, 3);
  EXPECT_EQ(a.join->members.size(), 2u);
  EXPECT_THAT(group_.members(), ::testing::SizeIs(2));
  EXPECT_EQ(group_.Heartbeat(b_id, std::nullopt, 3),
            ErrorCode::kUnknownMemberId);
}

TEST_F(GroupTest, SessionTimeoutEvictsSilentMemberOnly) {
  std::string a_id = StableWithOneMember();
  Answers a, b;
  std::string b_id = JoinNew(&b);
  Join(Args(a_id), &a);
  Sync(a_id, 2, &a, {{a_id, "x"}, {b_id, "y"}});
  Sync(b_id, 2, &b);
  ASSERT_EQ(group_.state(), GroupState::kStable);

  // A heartbeats every 3 s; B goes silent.
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(3000);
    EXPECT_EQ(group_.Heartbeat(a_id, std::nullopt, 2), ErrorCode::kNone);
  }
  EXPECT_EQ(group_.state(), GroupState::kStable);
  clock_.Advance(kSessionMs - 9000);  // B's session is over
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(group_.Heartbeat(a_id, std::nullopt, 2),
            ErrorCode::kRebalanceInProgress);
  Join(Args(a_id), &a);
  ASSERT_TRUE(a.join.has_value()) << "A is the only member left";
  EXPECT_EQ(a.join->generation_id, 3);
  EXPECT_EQ(a.join->members.size(), 1u);
  EXPECT_EQ(group_.Heartbeat(b_id, std::nullopt, 2),
            ErrorCode::kUnknownMemberId);
}

TEST_F(GroupTest, LeaveRebalancesAndLastLeaveEmptiesTheGroup) {
  std::string a_id = StableWithOneMember();
  Answers a, b;
  std::string b_id = JoinNew(&b);
  Join(Args(a_id), &a);
  Sync(a_id, 2, &a, {{a_id, "x"}, {b_id, "y"}});
  Sync(b_id, 2, &b);

  LeaveResult left = group_.Leave({{b_id, std::nullopt}});
  EXPECT_EQ(left.error, ErrorCode::kNone);
  EXPECT_THAT(left.members, ElementsAre(ErrorCode::kNone));
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  Join(Args(a_id), &a);
  ASSERT_TRUE(a.join.has_value());
  EXPECT_EQ(a.join->generation_id, 3);

  EXPECT_THAT(group_.Leave({{"stranger", std::nullopt}}).members,
              ElementsAre(ErrorCode::kUnknownMemberId));
  EXPECT_THAT(group_.Leave({{a_id, std::nullopt}}).members,
              ElementsAre(ErrorCode::kNone));
  EXPECT_EQ(group_.state(), GroupState::kEmpty);
  EXPECT_EQ(group_.generation(), 4);
  EXPECT_THAT(group_.members(), IsEmpty());
  EXPECT_EQ(persistence_.stored.back().generation, 4);
  EXPECT_THAT(persistence_.stored.back().members, IsEmpty());
}

TEST_F(GroupTest, LeaveWhileOthersWaitCompletesTheirJoin) {
  std::string a_id = StableWithOneMember();
  Answers b;
  JoinNew(&b);
  EXPECT_FALSE(b.join.has_value());
  // A leaves instead of rejoining: B no longer waits for it.
  group_.Leave({{a_id, std::nullopt}});
  ASSERT_TRUE(b.join.has_value());
  EXPECT_EQ(b.join->leader, b.join->member_id);
  EXPECT_EQ(b.join->generation_id, 2);
}

TEST_F(GroupTest, WhoMayCommitOffsets) {
  // Empty: anyone outside the group (generation -1, no member).
  EXPECT_EQ(group_.ValidateOffsetCommit(-1, "", std::nullopt, false),
            ErrorCode::kNone);
  std::string a_id = StableWithOneMember();
  EXPECT_EQ(group_.ValidateOffsetCommit(1, a_id, std::nullopt, false),
            ErrorCode::kNone);
  EXPECT_EQ(group_.ValidateOffsetCommit(0, a_id, std::nullopt, false),
            ErrorCode::kIllegalGeneration);
  EXPECT_EQ(group_.ValidateOffsetCommit(1, "ghost", std::nullopt, false),
            ErrorCode::kUnknownMemberId);
  // Outsiders may not commit for a group with members; transactional
  // commits without member (TxnOffsetCommit < v3) may.
  EXPECT_EQ(group_.ValidateOffsetCommit(-1, "", std::nullopt, false),
            ErrorCode::kUnknownMemberId);
  EXPECT_EQ(group_.ValidateOffsetCommit(-1, "", std::nullopt, true),
            ErrorCode::kNone);

  Answers a, b;
  std::string b_id = JoinNew(&b);
  // PreparingRebalance: the current generation may still commit.
  EXPECT_EQ(group_.ValidateOffsetCommit(1, a_id, std::nullopt, false),
            ErrorCode::kNone);
  Join(Args(a_id), &a);
  // CompletingRebalance: members have the new generation, not yet their
  // partitions.
  EXPECT_EQ(group_.ValidateOffsetCommit(2, a_id, std::nullopt, false),
            ErrorCode::kRebalanceInProgress);
  EXPECT_EQ(group_.ValidateOffsetCommit(2, b_id, std::nullopt, true),
            ErrorCode::kNone);
  EXPECT_EQ(group_.ValidateOffsetCommit(1, b_id, std::nullopt, true),
            ErrorCode::kIllegalGeneration);
}

TEST_F(GroupTest, SyncAnswersAndErrorsByState) {
  Answers a;
  std::string id = JoinNew(&a);
  Sync(id, 0, &a);
  ASSERT_TRUE(a.sync.has_value());
  EXPECT_EQ(a.sync->error, ErrorCode::kRebalanceInProgress);
  Sync(id, 5, &a);
  EXPECT_EQ(a.sync->error, ErrorCode::kIllegalGeneration);
  clock_.Advance(0);
  Sync("ghost", 1, &a);
  EXPECT_EQ(a.sync->error, ErrorCode::kUnknownMemberId);
  Sync(id, 1, &a, {{id, "mine"}});
  EXPECT_EQ(a.sync->assignment, "mine");
  // Stable: a repeated sync gets the same assignment again.
  Sync(id, 1, &a);
  EXPECT_EQ(a.sync->error, ErrorCode::kNone);
  EXPECT_EQ(a.sync->assignment, "mine");
  EXPECT_EQ(a.sync->protocol_name, "range");
}

TEST_F(GroupTest, FailedAssignmentStoreSendsEveryoneBackToJoin) {
  Answers a;
  std::string id = JoinNew(&a);
  clock_.Advance(0);
  persistence_.hold = true;
  Sync(id, 1, &a, {{id, "mine"}});
  EXPECT_FALSE(a.sync.has_value()) << "answered only once stored";
  persistence_.ReleaseAll(ErrorCode::kNotCoordinator);
  ASSERT_TRUE(a.sync.has_value());
  EXPECT_EQ(a.sync->error, ErrorCode::kNotCoordinator);
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
}

TEST_F(GroupTest, MemberThatNeverSyncsIsRemoved) {
  std::string a_id = StableWithOneMember();
  Answers a, b;
  std::string b_id = JoinNew(&b);
  Join(Args(a_id), &a);
  ASSERT_TRUE(b.join.has_value());
  Sync(a_id, 2, &a, {{a_id, "x"}, {b_id, "y"}});
  ASSERT_EQ(group_.state(), GroupState::kStable);
  // B got its join answer but never asks for its assignment; it heartbeats,
  // so only the sync deadline (the rebalance timeout) catches it.
  for (int i = 0; i < kRebalanceMs / 5000; ++i) {
    EXPECT_TRUE(group_.members().contains(b_id));
    clock_.Advance(5000);
    group_.Heartbeat(a_id, std::nullopt, 2);
    group_.Heartbeat(b_id, std::nullopt, 2);
  }
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  EXPECT_FALSE(group_.members().contains(b_id));
}

TEST_F(GroupTest, PendingMemberIdExpiresWithoutRejoin) {
  std::string a_id = StableWithOneMember();
  Answers x;
  Join(Args(""), &x);
  ASSERT_EQ(x.join->error, ErrorCode::kMemberIdRequired);
  EXPECT_TRUE(group_.has_pending_members());
  EXPECT_EQ(group_.state(), GroupState::kStable) << "no rebalance yet";
  clock_.Advance(kSessionMs / 2);
  EXPECT_EQ(group_.Heartbeat(a_id, std::nullopt, 1), ErrorCode::kNone);
  EXPECT_TRUE(group_.has_pending_members());
  clock_.Advance(kSessionMs / 2);
  EXPECT_FALSE(group_.has_pending_members());
  EXPECT_EQ(group_.state(), GroupState::kStable);
  // The id is no longer accepted... as a member id of this group.
  Join(Args(x.join->member_id), &x);
  EXPECT_EQ(x.join->error, ErrorCode::kUnknownMemberId);
}

TEST_F(GroupTest, OldClientsJoinWithoutMemberIdDance) {
  Answers a;
  Join(Args("", /*require_known=*/false), &a);
  clock_.Advance(0);
  ASSERT_TRUE(a.join.has_value());
  EXPECT_EQ(a.join->error, ErrorCode::kNone);
  EXPECT_EQ(a.join->generation_id, 1);
}

TEST_F(GroupTest, InconsistentProtocolsAreRefused) {
  std::string a_id = StableWithOneMember();
  Answers b;
  JoinArgs args = Args("", false);
  args.protocols = {{"sticky", Subscription({"orders"})}};
  Join(std::move(args), &b);
  EXPECT_EQ(b.join->error, ErrorCode::kInconsistentGroupProtocol);
  args = Args("", false);
  args.protocol_type = "connect";
  Join(std::move(args), &b);
  EXPECT_EQ(b.join->error, ErrorCode::kInconsistentGroupProtocol);
}

TEST_F(GroupTest, FollowerRejoinInStableGetsCurrentGenerationWithoutRebalance) {
  std::string a_id = StableWithOneMember();
  Answers a, b;
  std::string b_id = JoinNew(&b);
  Join(Args(a_id), &a);
  Sync(a_id, 2, &a, {{a_id, "x"}, {b_id, "y"}});
  Sync(b_id, 2, &b);
  Join(Args(b_id), &b);
  ASSERT_TRUE(b.join.has_value());
  EXPECT_EQ(b.join->generation_id, 2);
  EXPECT_EQ(group_.state(), GroupState::kStable);
  // The leader's rejoin does rebalance (it may have seen topics change).
  Join(Args(a_id), &a);
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
}

TEST_F(GroupTest, StaticMemberRestartKeepsAssignmentWithoutRebalance) {
  Answers a, b;
  Join(Args("", true, "instance-a"), &a);
  ASSERT_EQ(a.join.has_value(), false) << "static members skip the id dance";
  clock_.Advance(0);
  ASSERT_TRUE(a.join.has_value());
  std::string a_id = a.join->member_id;
  EXPECT_THAT(a_id, ::testing::StartsWith("instance-a-"));
  Join(Args("", true, "instance-b"), &b);
  Join(Args(a_id, true, "instance-a"), &a);
  ASSERT_TRUE(b.join.has_value());
  std::string b_id = b.join->member_id;
  Sync(a_id, 2, &a, {{a_id, "A-parts"}, {b_id, "B-parts"}}, "instance-a");
  Sync(b_id, 2, &b, {}, "instance-b");
  ASSERT_EQ(group_.state(), GroupState::kStable);

  // instance-b restarts: it joins without its member id (a new process).
  Answers b2;
  Join(Args("", true, "instance-b"), &b2);
  ASSERT_TRUE(b2.join.has_value());
  EXPECT_EQ(b2.join->error, ErrorCode::kNone);
  EXPECT_EQ(group_.state(), GroupState::kStable) << "no rebalance";
  EXPECT_EQ(b2.join->generation_id, 2);
  std::string b2_id = b2.join->member_id;
  EXPECT_NE(b2_id, b_id);
  EXPECT_EQ(b2.join->leader, a_id);
  Sync(b2_id, 2, &b2, {}, "instance-b");
  EXPECT_EQ(b2.sync->assignment, "B-parts");
  // The old process is fenced.
  EXPECT_EQ(group_.Heartbeat(b_id, "instance-b", 2),
            ErrorCode::kFencedInstanceId);
  EXPECT_EQ(group_.Heartbeat(b2_id, "instance-b", 2), ErrorCode::kNone);
  EXPECT_EQ(group_.Heartbeat(a_id, "instance-a", 2), ErrorCode::kNone);
}

TEST_F(GroupTest, StaticLeaderRestartIsToldTheOldLeaderSoItDoesNotReassign) {
  Answers a;
  Join(Args("", true, "instance-a"), &a);
  clock_.Advance(0);
  std::string a_id = a.join->member_id;
  Sync(a_id, 1, &a, {{a_id, "all"}}, "instance-a");
  Answers a2;
  Join(Args("", true, "instance-a"), &a2);
  ASSERT_TRUE(a2.join.has_value());
  EXPECT_EQ(a2.join->leader, a_id) << "the old id: a2 syncs as a follower";
  EXPECT_NE(a2.join->member_id, a_id);
  EXPECT_THAT(a2.join->members, IsEmpty());
  Sync(a2.join->member_id, 1, &a2, {}, "instance-a");
  EXPECT_EQ(a2.sync->assignment, "all");
}

TEST_F(GroupTest, StaticMemberKeepsItsPlaceWhenItMissesARebalance) {
  Answers a, b;
  JoinArgs static_args = Args("", true, "instance-a");
  static_args.session_timeout_ms = 60000;  // longer than the rebalance timeout
  Join(static_args, &a);
  clock_.Advance(0);
  std::string a_id = a.join->member_id;
  Sync(a_id, 1, &a, {{a_id, "all"}}, "instance-a");
  std::string b_id = JoinNew(&b);
  // instance-a is restarting and does not rejoin: a dynamic member would be
  // dropped at the rebalance timeout, a static one keeps its place.
  clock_.Advance(kRebalanceMs);
  ASSERT_TRUE(b.join.has_value());
  EXPECT_EQ(b.join->leader, b_id) << "a member that rejoined leads";
  EXPECT_EQ(b.join->members.size(), 2u);
  EXPECT_TRUE(group_.members().contains(a_id));
  // The restarted instance comes back with a new member id; the group
  // rebalances so that the assignment names it.
  Answers a2;
  Join(static_args, &a2);
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  Join(Args(b_id), &b);
  ASSERT_TRUE(a2.join.has_value());
  EXPECT_EQ(a2.join->generation_id, 3);
  EXPECT_FALSE(group_.members().contains(a_id));
  EXPECT_EQ(group_.members().size(), 2u);
}

TEST_F(GroupTest, RestoreResumesStableGroupAndExpiresSilentMembers) {
  GroupRecord r;
  r.group_id = "g";
  r.protocol_type = "consumer";
  r.generation = 7;
  r.protocol_name = "range";
  r.leader = "m1";
  r.members.push_back({"m1", std::nullopt, "c", "/h", kRebalanceMs, kSessionMs,
                       Subscription({"orders"}), "a1"});
  r.members.push_back({"m2", "inst-2", "c", "/h", kRebalanceMs, kSessionMs,
                       Subscription({"orders"}), "a2"});
  group_.Restore(r);
  EXPECT_EQ(group_.state(), GroupState::kStable);
  EXPECT_EQ(group_.generation(), 7);
  EXPECT_TRUE(group_.IsSubscribedToTopic("orders"));
  EXPECT_FALSE(group_.IsSubscribedToTopic("other"));
  Answers a;
  Sync("m2", 7, &a, {}, "inst-2");
  EXPECT_EQ(a.sync->assignment, "a2");
  clock_.Advance(kSessionMs - 1);
  EXPECT_EQ(group_.Heartbeat("m1", std::nullopt, 7), ErrorCode::kNone);
  EXPECT_EQ(group_.Heartbeat("m2", "inst-2", 7), ErrorCode::kNone);
  clock_.Advance(1);
  EXPECT_EQ(group_.state(), GroupState::kStable);
  // Members that do not come back after the restart are expired.
  clock_.Advance(kSessionMs);
  EXPECT_EQ(group_.state(), GroupState::kEmpty);
  EXPECT_EQ(group_.generation(), 8);
}

// group.initial.rebalance.delay.ms as Kafka's InitialDelayedJoin runs it
// (GroupCoordinator.prepareRebalance, DelayedJoin.scala): the first delay in
// full; then, if a member joined the new group (generation 0) meanwhile and
// the rebalance timeout is not used up, another whole delay or what is left;
// remaining = max(rebalance timeout - delay, 0) at the start, and each
// extension takes min(delay, remaining) and leaves remaining - delay.
class DelayedGroupTest : public GroupTest {
 protected:
  static constexpr int32_t kDelayMs = 100;
  DelayedGroupTest() : GroupTest(GroupConfig{kDelayMs}) {}

  // A new member's two joins (MEMBER_ID_REQUIRED, then with its id), with
  // its own rebalance timeout: its id.
  std::string JoinNewWithTimeout(Answers* out, int32_t rebalance_timeout_ms) {
    Join(Args(""), out);
    EXPECT_TRUE(out->join.has_value());
    std::string id = out->join.has_value() ? out->join->member_id : "";
    JoinArgs args = Args(id);
    args.rebalance_timeout_ms = rebalance_timeout_ms;
    Join(std::move(args), out);
    return id;
  }

  // Moves the clock to `t_ms` (from the start of the test).
  void AdvanceTo(int64_t t_ms) { clock_.Advance(t_ms - clock_.now_ms()); }
};

TEST_F(DelayedGroupTest, AloneTheFirstMemberWaitsOneDelay) {
  Answers a;
  JoinNew(&a);
  AdvanceTo(kDelayMs - 1);
  EXPECT_FALSE(a.join.has_value());
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  AdvanceTo(kDelayMs);
  ASSERT_TRUE(a.join.has_value());
  EXPECT_EQ(a.join->generation_id, 1);
}

TEST_F(DelayedGroupTest, ANewcomerAddsAWholeDelayCountedFromTheFirstDelay) {
  // B at D/2: the first delay still ends at D, and another whole one runs
  // (to 2D), not one delay after B (1.5D).
  Answers a, b;
  JoinNew(&a);
  AdvanceTo(kDelayMs / 2);
  JoinNew(&b);
  AdvanceTo(kDelayMs * 3 / 2);
  EXPECT_FALSE(a.join.has_value());
  AdvanceTo(2 * kDelayMs - 1);
  EXPECT_FALSE(a.join.has_value());
  AdvanceTo(2 * kDelayMs);
  ASSERT_TRUE(a.join.has_value());
  ASSERT_TRUE(b.join.has_value());
  EXPECT_EQ(a.join->generation_id, 1);
  EXPECT_EQ(b.join->generation_id, 1);
  EXPECT_EQ(a.join->leader, b.join->leader);
  EXPECT_EQ(a.join->members.size() + b.join->members.size(), 2u);
}

TEST_F(DelayedGroupTest, MembersStartingTogetherWaitTwoDelays) {
  // However many join during the first delay, one more delay follows.
  Answers a, b, c;
  JoinNew(&a);
  AdvanceTo(5);
  JoinNew(&b);
  AdvanceTo(10);
  JoinNew(&c);
  AdvanceTo(2 * kDelayMs - 1);
  EXPECT_FALSE(a.join.has_value());
  AdvanceTo(2 * kDelayMs);
  ASSERT_TRUE(a.join.has_value());
  ASSERT_TRUE(c.join.has_value());
  EXPECT_EQ(c.join->generation_id, 1);
}

TEST_F(DelayedGroupTest, EachDelayWithANewcomerIsFollowedByAnother) {
  Answers a, b, c;
  JoinNew(&a);
  AdvanceTo(50);
  JoinNew(&b);  // in the first delay: another, to 200
  AdvanceTo(150);
  JoinNew(&c);  // in the second: another, to 300
  AdvanceTo(299);
  EXPECT_FALSE(a.join.has_value());
  AdvanceTo(300);  // nobody joined in the third
  ASSERT_TRUE(a.join.has_value());
  ASSERT_TRUE(c.join.has_value());
  EXPECT_EQ(c.join->generation_id, 1);
}

TEST_F(DelayedGroupTest, ExtensionsStopAtTheFirstMembersRebalanceTimeout) {
  // Rebalance timeout 250, delay 100: remaining 150 at the start; the delays
  // end at 100, 200 (remaining 50) and 250 (remaining 0), when the join
  // completes however many keep coming.
  Answers a, b, c, d;
  JoinNewWithTimeout(&a, 250);
  AdvanceTo(50);
  JoinNew(&b);  // its own rebalance timeout (30 s) does not count
  AdvanceTo(150);
  JoinNew(&c);
  AdvanceTo(220);
  JoinNew(&d);
  AdvanceTo(249);
  EXPECT_FALSE(a.join.has_value());
  AdvanceTo(250);
  ASSERT_TRUE(a.join.has_value());
  EXPECT_EQ(a.join->generation_id, 1);
  ASSERT_TRUE(d.join.has_value());
  // A member that comes now starts a rebalance of its own.
  Answers late;
  JoinNew(&late);
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
}

TEST_F(DelayedGroupTest, TheFirstDelayRunsInFullBeyondTheRebalanceTimeout) {
  Answers a, b;
  JoinNewWithTimeout(&a, 60);
  AdvanceTo(30);
  JoinNew(&b);
  AdvanceTo(kDelayMs - 1);
  EXPECT_FALSE(a.join.has_value());
  AdvanceTo(kDelayMs);
  ASSERT_TRUE(a.join.has_value());
  ASSERT_TRUE(b.join.has_value());
}

TEST_F(DelayedGroupTest, AGroupThatEmptiedWaitsOneDelayWhoeverJoins) {
  // Only a new group (generation 0) is waited for in more than one delay.
  Answers a;
  std::string id = JoinNew(&a);
  AdvanceTo(kDelayMs);
  Sync(id, 1, &a, {{id, "x"}});
  ASSERT_EQ(group_.Leave({{id, std::nullopt}}).members[0], ErrorCode::kNone);
  ASSERT_EQ(group_.state(), GroupState::kEmpty);
  const int32_t generation = group_.generation();
  Answers b, c;
  const int64_t start = clock_.now_ms();
  JoinNew(&b);
  AdvanceTo(start + 50);
  JoinNew(&c);
  AdvanceTo(start + kDelayMs);
  ASSERT_TRUE(b.join.has_value());
  ASSERT_TRUE(c.join.has_value());
  EXPECT_EQ(b.join->generation_id, generation + 1);
}

TEST_F(DelayedGroupTest, ANewcomerAfterTheTimeoutRanOutStillCountsLater) {
  // Kafka's newMemberAdded is cleared only by a delay that extends: set when
  // no time is left, it stays, and the next time the group empties and
  // refills (generation > 0) its first delay is followed by another.
  Answers a, b;
  // No time left after the first delay.
  std::string id_a = JoinNewWithTimeout(&a, 60);
  AdvanceTo(30);
  std::string id_b = JoinNew(&b);
  AdvanceTo(kDelayMs);
  ASSERT_TRUE(a.join.has_value());
  EXPECT_THAT(
      group_.Leave({{id_a, std::nullopt}, {id_b, std::nullopt}}).members,
      ::testing::ElementsAre(ErrorCode::kNone, ErrorCode::kNone));
  ASSERT_EQ(group_.state(), GroupState::kEmpty);
  Answers c;
  const int64_t start = clock_.now_ms();
  JoinNew(&c);
  AdvanceTo(start + kDelayMs);
  EXPECT_FALSE(c.join.has_value());
  AdvanceTo(start + 2 * kDelayMs);
  ASSERT_TRUE(c.join.has_value());
}

}  // namespace
}  // namespace exactly::broker
