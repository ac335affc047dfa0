// Static members (KIP-345) removed by LeaveGroup v3+ with their instance id
// and no member id, as AdminClient.removeMembersFromConsumerGroup does: the
// group forgets them, elects a leader among the members left, and rebalances
// (on the request or when the rebalance timer fires); the instance may come
// back. A leave that names a member id for an instance held by another member
// is fenced. Issue 18, finding 1: these crashed the broker.
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "group/group.h"
#include "gtest/gtest.h"
#include "unit/group/group_fixture.h"

namespace exactly::broker {
namespace {

using ::exactly::broker::testing::Answers;
using ::exactly::broker::testing::GroupTest;
using ::exactly::broker::testing::kRebalanceMs;
using protocol::ErrorCode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class StaticLeaveTest : public GroupTest {
 protected:
  // Sessions outlive the rebalance timeout, so that only the timers under
  // test fire.
  JoinArgs Static(std::string member_id, std::string instance) {
    JoinArgs args = Args(std::move(member_id), true, std::move(instance));
    args.session_timeout_ms = 2 * kRebalanceMs;
    return args;
  }

  // Static members instance-a (the leader) and instance-b have their join
  // answers for generation 2: the group is CompletingRebalance.
  void JoinBoth() {
    Join(Static("", "instance-a"), &a_);
    clock_.Advance(0);
    ASSERT_TRUE(a_.join.has_value());
    a_id_ = a_.join->member_id;
    Join(Static("", "instance-b"), &b_);
    Join(Static(a_id_, "instance-a"), &a_);
    ASSERT_TRUE(b_.join.has_value());
    b_id_ = b_.join->member_id;
    ASSERT_EQ(group_.state(), GroupState::kCompletingRebalance);
    ASSERT_EQ(group_.leader(), a_id_);
  }

  void SyncBoth() {
    Sync(a_id_, 2, &a_, {{a_id_, "A"}, {b_id_, "B"}}, "instance-a");
    Sync(b_id_, 2, &b_, {}, "instance-b");
    ASSERT_EQ(group_.state(), GroupState::kStable);
  }

  // Removes `instance` as an admin does: no member id.
  LeaveResult LeaveByInstance(const std::string& instance) {
    return group_.Leave({{"", instance}});
  }

  void ExpectLeaderIsAMember() {
    if (group_.members().empty()) {
      EXPECT_EQ(group_.leader(), "");
    } else {
      EXPECT_TRUE(group_.members().contains(group_.leader()))
          << "leader " << group_.leader() << " is not a member";
    }
  }

  Answers a_, b_;
  std::string a_id_, b_id_;
};

TEST_F(StaticLeaveTest, OnlyMemberLeavesByInstanceIdAndTheGroupEmpties) {
  Join(Static("", "instance-a"), &a_);
  clock_.Advance(0);
  a_id_ = a_.join->member_id;
  Sync(a_id_, 1, &a_, {{a_id_, "A"}}, "instance-a");
  ASSERT_EQ(group_.state(), GroupState::kStable);

  LeaveResult left = LeaveByInstance("instance-a");
  EXPECT_EQ(left.error, ErrorCode::kNone);
  EXPECT_THAT(left.members, ElementsAre(ErrorCode::kNone));
  EXPECT_EQ(group_.state(), GroupState::kEmpty);
  EXPECT_EQ(group_.generation(), 2);
  EXPECT_THAT(group_.members(), IsEmpty());
  ExpectLeaderIsAMember();
}

TEST_F(StaticLeaveTest, LeaderLeavesByInstanceIdWhileCompletingRebalance) {
  JoinBoth();
  Sync(b_id_, 2, &b_, {}, "instance-b");
  EXPECT_FALSE(b_.sync.has_value()) << "waits for the leader";

  EXPECT_THAT(LeaveByInstance("instance-a").members,
              ElementsAre(ErrorCode::kNone));
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  ASSERT_TRUE(b_.sync.has_value());
  EXPECT_EQ(b_.sync->error, ErrorCode::kRebalanceInProgress);
  EXPECT_FALSE(group_.members().contains(a_id_));
  EXPECT_EQ(group_.leader(), b_id_) << "the member left leads";

  Join(Static(b_id_, "instance-b"), &b_);
  ASSERT_TRUE(b_.join.has_value());
  EXPECT_EQ(b_.join->error, ErrorCode::kNone);
  EXPECT_EQ(b_.join->generation_id, 3);
  EXPECT_EQ(b_.join->leader, b_id_);
  EXPECT_EQ(b_.join->members.size(), 1u);
  ExpectLeaderIsAMember();
}

TEST_F(StaticLeaveTest, LeaderLeavesByInstanceIdWhileStable) {
  JoinBoth();
  SyncBoth();

  EXPECT_THAT(LeaveByInstance("instance-a").members,
              ElementsAre(ErrorCode::kNone));
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(group_.leader(), b_id_);
  EXPECT_EQ(group_.Heartbeat(a_id_, "instance-a", 2),
            ErrorCode::kUnknownMemberId);
  EXPECT_EQ(group_.Heartbeat(b_id_, "instance-b", 2),
            ErrorCode::kRebalanceInProgress);

  Join(Static(b_id_, "instance-b"), &b_);
  ASSERT_TRUE(b_.join.has_value());
  EXPECT_EQ(b_.join->generation_id, 3);
  EXPECT_EQ(b_.join->leader, b_id_);
  Sync(b_id_, 3, &b_, {{b_id_, "all"}}, "instance-b");
  ASSERT_TRUE(b_.sync.has_value());
  EXPECT_EQ(b_.sync->assignment, "all");
  EXPECT_EQ(group_.state(), GroupState::kStable);
}

TEST_F(StaticLeaveTest, FollowerLeavesByInstanceIdWhileStable) {
  JoinBoth();
  SyncBoth();
  EXPECT_THAT(LeaveByInstance("instance-b").members,
              ElementsAre(ErrorCode::kNone));
  EXPECT_EQ(group_.leader(), a_id_);
  Join(Static(a_id_, "instance-a"), &a_);
  ASSERT_TRUE(a_.join.has_value());
  EXPECT_EQ(a_.join->generation_id, 3);
  EXPECT_EQ(a_.join->members.size(), 1u);
}

TEST_F(StaticLeaveTest, RebalanceTimerAfterTheLeaderLeftByInstanceId) {
  JoinBoth();
  SyncBoth();
  Answers c;
  std::string c_id = JoinNew(&c);  // a dynamic member: a rebalance starts
  Join(Static(a_id_, "instance-a"), &a_);
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);

  // The leader is removed while the group waits for instance-b, which never
  // rejoins: the rebalance timer completes the join.
  EXPECT_THAT(LeaveByInstance("instance-a").members,
              ElementsAre(ErrorCode::kNone));
  ASSERT_TRUE(a_.join.has_value());
  EXPECT_EQ(a_.join->error, ErrorCode::kUnknownMemberId);
  ExpectLeaderIsAMember();
  EXPECT_FALSE(c.join.has_value());
  clock_.Advance(kRebalanceMs);
  ASSERT_TRUE(c.join.has_value());
  EXPECT_EQ(c.join->error, ErrorCode::kNone);
  EXPECT_EQ(c.join->generation_id, 3);
  EXPECT_EQ(c.join->leader, c_id) << "the only member that rejoined leads";
  EXPECT_EQ(c.join->members.size(), 2u) << "instance-b keeps its place";
  ExpectLeaderIsAMember();
}

TEST_F(StaticLeaveTest, EveryStaticMemberLeavesInOneRequest) {
  JoinBoth();
  SyncBoth();
  Answers c;
  std::string c_id = JoinNew(&c);
  // Both static members go in one request (the leader first); the dynamic
  // newcomer is all that is left, and no longer waits for them.
  EXPECT_THAT(group_.Leave({{"", "instance-a"}, {"", "instance-b"}}).members,
              ElementsAre(ErrorCode::kNone, ErrorCode::kNone));
  ExpectLeaderIsAMember();
  ASSERT_TRUE(c.join.has_value());
  EXPECT_EQ(c.join->generation_id, 3);
  EXPECT_EQ(c.join->leader, c_id);
  EXPECT_EQ(c.join->members.size(), 1u);
}

TEST_F(StaticLeaveTest, InstanceRejoinsAfterBeingRemoved) {
  JoinBoth();
  SyncBoth();
  ASSERT_THAT(LeaveByInstance("instance-a").members,
              ElementsAre(ErrorCode::kNone));
  // The same instance comes back (a new process): a new member id, and the
  // rebalance under way takes it in.
  Answers a2;
  Join(Static("", "instance-a"), &a2);
  Join(Static(b_id_, "instance-b"), &b_);
  ASSERT_TRUE(a2.join.has_value());
  ASSERT_TRUE(b_.join.has_value());
  const std::string a2_id = a2.join->member_id;
  EXPECT_NE(a2_id, a_id_);
  EXPECT_EQ(a2.join->generation_id, 3);
  EXPECT_EQ(b_.join->leader, b_id_);
  EXPECT_EQ(group_.members().size(), 2u);
  EXPECT_EQ(group_.Heartbeat(a_id_, "instance-a", 3),
            ErrorCode::kFencedInstanceId);

  // Removed and back once more, now while Stable.
  Sync(b_id_, 3, &b_, {{b_id_, "B"}, {a2_id, "A"}}, "instance-b");
  Sync(a2_id, 3, &a2, {}, "instance-a");
  ASSERT_EQ(group_.state(), GroupState::kStable);
  ASSERT_THAT(LeaveByInstance("instance-a").members,
              ElementsAre(ErrorCode::kNone));
  Answers a3;
  Join(Static("", "instance-a"), &a3);
  Join(Static(b_id_, "instance-b"), &b_);
  ASSERT_TRUE(a3.join.has_value());
  EXPECT_EQ(a3.join->generation_id, 4);
  EXPECT_EQ(group_.members().size(), 2u);
  ExpectLeaderIsAMember();
}

TEST_F(StaticLeaveTest, LeaveAnswersPerMemberAsKafkaDoes) {
  JoinBoth();
  SyncBoth();
  LeaveResult left = group_.Leave({
      {"", "no-such-instance"},        // unknown instance
      {"", std::nullopt},              // neither id
      {"someone-else", "instance-b"},  // another process holds instance-b
      {b_id_, "instance-b"},           // the member itself, by both ids
  });
  EXPECT_EQ(left.error, ErrorCode::kNone);
  EXPECT_THAT(
      left.members,
      ElementsAre(ErrorCode::kUnknownMemberId, ErrorCode::kUnknownMemberId,
                  ErrorCode::kFencedInstanceId, ErrorCode::kNone));
  EXPECT_FALSE(group_.members().contains(b_id_));
  EXPECT_TRUE(group_.members().contains(a_id_));
  // Gone now: a second removal by instance id is unknown.
  EXPECT_THAT(LeaveByInstance("instance-b").members,
              ElementsAre(ErrorCode::kUnknownMemberId));
}

}  // namespace
}  // namespace exactly::broker
