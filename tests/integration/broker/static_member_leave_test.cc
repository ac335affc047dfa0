// Removing a static member (KIP-345) over the wire as Kafka's
// AdminClient.removeMembersFromConsumerGroup does: JoinGroup v5 with a
// group_instance_id, then LeaveGroup v3 naming that instance and no member id.
// Issue 18, finding 1: these two requests crashed the broker, in memory and
// with a data dir, in CompletingRebalance and in Stable.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <tuple>

#include "absl/status/statusor.h"
#include "exactly/broker/broker.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawClient;
using ::exactly::testing::TempDir;
using protocol::ErrorCode;
using ::testing::IsEmpty;

int16_t Code(ErrorCode e) { return static_cast<int16_t>(e); }

constexpr char kGroup[] = "static-group";

protocol::JoinGroupRequest StaticJoin(const std::string& instance,
                                      const std::string& member_id = "") {
  protocol::JoinGroupRequest join;
  join.group_id = kGroup;
  join.session_timeout_ms = 10000;
  join.rebalance_timeout_ms = 10000;
  join.member_id = member_id;
  join.group_instance_id = instance;
  join.protocol_type = "consumer";
  // A consumer subscription (v0) to topic "t".
  join.protocols = {
      {"range", std::string("\0\0\0\0\0\x01\0\x01t\xff\xff\xff\xff", 13), {}}};
  return join;
}

protocol::SyncGroupResponse SyncAsLeader(RawClient& client,
                                         const protocol::JoinGroupResponse& j,
                                         const std::string& instance) {
  protocol::SyncGroupRequest sync;
  sync.group_id = kGroup;
  sync.generation_id = j.generation_id;
  sync.member_id = j.member_id;
  sync.group_instance_id = instance;
  for (const auto& m : j.members)
    sync.assignments.push_back({m.member_id, "x", {}});
  return client.Call<protocol::SyncGroupResponse>(sync, 3);
}

protocol::LeaveGroupResponse Leave(RawClient& client,
                                   const std::string& member_id,
                                   const std::string& instance) {
  protocol::LeaveGroupRequest leave;
  leave.group_id = kGroup;
  leave.members = {{member_id, instance, std::nullopt, {}}};
  return client.Call<protocol::LeaveGroupResponse>(leave, 3);
}

protocol::DescribeGroupsResponse::Group Describe(RawClient& client) {
  protocol::DescribeGroupsRequest describe;
  describe.groups = {kGroup};
  auto r = client.Call<protocol::DescribeGroupsResponse>(describe, 4);
  return r.groups.empty() ? protocol::DescribeGroupsResponse::Group{}
                          : r.groups[0];
}

// (with a data dir, synced to Stable before the leave)
class StaticMemberLeaveTest
    : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override {
    BrokerOptions options;
    if (std::get<0>(GetParam())) options.data_dir = dir_.path();
    absl::StatusOr<std::unique_ptr<Broker>> broker = Broker::Start(options);
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = std::move(*broker);
    ASSERT_TRUE(broker_->CreateTopic("t", 2).ok());
  }
  bool stable() const { return std::get<1>(GetParam()); }

  TempDir dir_;
  std::unique_ptr<Broker> broker_;
};

TEST_P(StaticMemberLeaveTest, AdminRemovesTheOnlyMemberByInstanceId) {
  RawClient member(broker_->port());
  auto joined =
      member.Call<protocol::JoinGroupResponse>(StaticJoin("inst-a"), 5);
  ASSERT_EQ(joined.error_code, 0);
  ASSERT_EQ(joined.leader, joined.member_id);
  if (stable()) {
    ASSERT_EQ(SyncAsLeader(member, joined, "inst-a").error_code, 0);
  }

  RawClient admin(broker_->port());
  auto left = Leave(admin, "", "inst-a");
  EXPECT_EQ(left.error_code, 0);
  ASSERT_EQ(left.members.size(), 1u);
  EXPECT_EQ(left.members[0].member_id, "");
  EXPECT_EQ(left.members[0].group_instance_id, "inst-a");
  EXPECT_EQ(left.members[0].error_code, 0);
  auto described = Describe(admin);
  EXPECT_EQ(described.group_state, "Empty");
  EXPECT_THAT(described.members, IsEmpty());

  // The instance comes back with a new member id and leads again.
  auto rejoined =
      member.Call<protocol::JoinGroupResponse>(StaticJoin("inst-a"), 5);
  EXPECT_EQ(rejoined.error_code, 0);
  EXPECT_NE(rejoined.member_id, joined.member_id);
  EXPECT_EQ(rejoined.leader, rejoined.member_id);
  EXPECT_EQ(rejoined.generation_id, joined.generation_id + 2);
  // The old member id is fenced; an unknown instance is unknown.
  EXPECT_EQ(Leave(admin, joined.member_id, "inst-a").members.at(0).error_code,
            Code(ErrorCode::kFencedInstanceId));
  EXPECT_EQ(Leave(admin, "", "inst-z").members.at(0).error_code,
            Code(ErrorCode::kUnknownMemberId));
}

TEST_P(StaticMemberLeaveTest, RemovingTheLeaderByInstanceIdElectsAnother) {
  RawClient a(broker_->port());
  RawClient b(broker_->port());
  auto a1 = a.Call<protocol::JoinGroupResponse>(StaticJoin("inst-a"), 5);
  ASSERT_EQ(a1.error_code, 0);
  ASSERT_EQ(SyncAsLeader(a, a1, "inst-a").error_code, 0);
  // B's join rebalances the group; A rejoins, and both get generation 2.
  RawClient admin(broker_->port());
  b.Send(StaticJoin("inst-b"), 5);
  for (int i = 0; i < 500; ++i) {
    if (Describe(admin).group_state == "PreparingRebalance") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto a2 = a.Call<protocol::JoinGroupResponse>(
      StaticJoin("inst-a", a1.member_id), 5);
  absl::StatusOr<protocol::JoinGroupResponse> b2 =
      b.Receive<protocol::JoinGroupResponse>(5);
  ASSERT_TRUE(b2.ok()) << b2.status();
  ASSERT_EQ(a2.generation_id, 2);
  ASSERT_EQ(b2->generation_id, 2);
  ASSERT_EQ(a2.leader, a1.member_id);
  if (stable()) {
    ASSERT_EQ(SyncAsLeader(a, a2, "inst-a").error_code, 0);
    protocol::SyncGroupRequest sync;
    sync.group_id = kGroup;
    sync.generation_id = 2;
    sync.member_id = b2->member_id;
    sync.group_instance_id = "inst-b";
    ASSERT_EQ(b.Call<protocol::SyncGroupResponse>(sync, 3).error_code, 0);
  }

  EXPECT_EQ(Leave(admin, "", "inst-a").members.at(0).error_code, 0);
  auto b3 = b.Call<protocol::JoinGroupResponse>(
      StaticJoin("inst-b", b2->member_id), 5);
  EXPECT_EQ(b3.error_code, 0);
  EXPECT_EQ(b3.generation_id, 3);
  EXPECT_EQ(b3.leader, b2->member_id);
  ASSERT_EQ(b3.members.size(), 1u);
  EXPECT_EQ(b3.members[0].member_id, b2->member_id);
  EXPECT_EQ(SyncAsLeader(b, b3, "inst-b").error_code, 0);
  EXPECT_EQ(Describe(admin).group_state, "Stable");
}

INSTANTIATE_TEST_SUITE_P(
    InMemoryAndOnDisk, StaticMemberLeaveTest,
    ::testing::Combine(::testing::Bool(), ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<bool, bool>>& info) {
      return std::string(std::get<0>(info.param) ? "DataDir" : "InMemory") +
             (std::get<1>(info.param) ? "Stable" : "CompletingRebalance");
    });

}  // namespace
}  // namespace exactly::broker
