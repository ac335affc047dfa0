// The group APIs at the versions no client here sends (the flexible ones, the
// batched ones, the admin ones), as raw requests on a socket: each answer is
// checked field by field against what Kafka 3.4 answers.
#include <memory>
#include <string>

#include "exactly/broker/broker.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"
#include "support/raw_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawClient;
using protocol::ErrorCode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

int16_t Code(ErrorCode e) { return static_cast<int16_t>(e); }

class GroupWireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BrokerOptions options;
    options.group_min_session_timeout_ms = 1000;
    absl::StatusOr<std::unique_ptr<Broker>> broker = Broker::Start(options);
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = std::move(*broker);
    ASSERT_TRUE(broker_->CreateTopic("t", 2).ok());
    client_ = std::make_unique<RawClient>(broker_->port(), "wire-client");
  }

  // Joins `group` at JoinGroup v9 (the MEMBER_ID_REQUIRED round trip, then
  // the join) and syncs at v5; returns the member id.
  std::string JoinAndSync(const std::string& group) {
    protocol::JoinGroupRequest join;
    join.group_id = group;
    join.session_timeout_ms = 10000;
    join.rebalance_timeout_ms = 10000;
    join.protocol_type = "consumer";
    join.protocols = {{"range",
                       std::string("\0\0\0\0\0\x01\0\x01t\xff\xff\xff\xff", 13),
                       {}}};
    join.reason = "test";
    auto first = client_->Call<protocol::JoinGroupResponse>(join, 9);
    EXPECT_EQ(first.error_code, Code(ErrorCode::kMemberIdRequired));
    EXPECT_FALSE(first.member_id.empty());
    join.member_id = first.member_id;
    auto joined = client_->Call<protocol::JoinGroupResponse>(join, 9);
    EXPECT_EQ(joined.error_code, 0);
    EXPECT_EQ(joined.generation_id, 1);
    EXPECT_EQ(joined.protocol_type, "consumer");
    EXPECT_EQ(joined.protocol_name, "range");
    EXPECT_EQ(joined.leader, joined.member_id);
    EXPECT_FALSE(joined.skip_assignment);
    EXPECT_EQ(joined.members.size(), 1u);

    protocol::SyncGroupRequest sync;
    sync.group_id = group;
    sync.generation_id = 1;
    sync.member_id = joined.member_id;
    auto refused = client_->Call<protocol::SyncGroupResponse>(sync, 5);
    EXPECT_EQ(refused.error_code, Code(ErrorCode::kInconsistentGroupProtocol))
        << "v5 must name the protocol";
    sync.protocol_type = "consumer";
    sync.protocol_name = "range";
    sync.assignments = {{joined.member_id, "the-assignment", {}}};
    auto synced = client_->Call<protocol::SyncGroupResponse>(sync, 5);
    EXPECT_EQ(synced.error_code, 0);
    EXPECT_EQ(synced.assignment, "the-assignment");
    EXPECT_EQ(synced.protocol_type, "consumer");
    EXPECT_EQ(synced.protocol_name, "range");
    return joined.member_id;
  }

  std::unique_ptr<Broker> broker_;
  std::unique_ptr<RawClient> client_;
};

TEST_F(GroupWireTest,
       FindCoordinatorAnswersThisBrokerForGroupsAndTransactions) {
  protocol::FindCoordinatorRequest one;
  one.key = "g";
  one.key_type = protocol::kCoordinatorKeyTransaction;
  auto v3 = client_->Call<protocol::FindCoordinatorResponse>(one, 3);
  EXPECT_EQ(v3.error_code, 0);
  EXPECT_EQ(v3.node_id, 1);
  EXPECT_EQ(v3.host, "127.0.0.1");
  EXPECT_EQ(v3.port, broker_->port());

  protocol::FindCoordinatorRequest many;
  many.key_type = protocol::kCoordinatorKeyGroup;
  many.coordinator_keys = {"a", "b"};
  auto v4 = client_->Call<protocol::FindCoordinatorResponse>(many, 4);
  ASSERT_EQ(v4.coordinators.size(), 2u);
  EXPECT_EQ(v4.coordinators[0].key, "a");
  EXPECT_EQ(v4.coordinators[1].key, "b");
  EXPECT_EQ(v4.coordinators[1].port, broker_->port());
  EXPECT_EQ(v4.coordinators[1].error_code, 0);

  one.key_type = 7;
  auto bad = client_->Call<protocol::FindCoordinatorResponse>(one, 1);
  EXPECT_EQ(bad.error_code, Code(ErrorCode::kInvalidRequest));

  broker_->faults().FailRequests({.api_key = 10}, 16 /*NOT_COORDINATOR*/, 1);
  auto injected = client_->Call<protocol::FindCoordinatorResponse>(many, 4);
  EXPECT_EQ(injected.coordinators[0].error_code,
            Code(ErrorCode::kNotCoordinator));
  EXPECT_EQ(injected.coordinators[1].error_code, 0);
}

TEST_F(GroupWireTest, FlexibleMembershipAndOffsetVersions) {
  std::string member = JoinAndSync("g");

  protocol::HeartbeatRequest hb;
  hb.group_id = "g";
  hb.generation_id = 1;
  hb.member_id = member;
  EXPECT_EQ(client_->Call<protocol::HeartbeatResponse>(hb, 4).error_code, 0);
  hb.generation_id = 0;
  EXPECT_EQ(client_->Call<protocol::HeartbeatResponse>(hb, 4).error_code,
            Code(ErrorCode::kIllegalGeneration));

  protocol::OffsetCommitRequest commit;
  commit.group_id = "g";
  commit.generation_id = 1;
  commit.member_id = member;
  commit.topics = {
      {"t", {{0, 42, 5, -1, "meta", {}}, {1, 7, -1, -1, std::nullopt, {}}}, {}},
      {"no-such-topic", {{0, 1, -1, -1, std::nullopt, {}}}, {}}};
  auto committed = client_->Call<protocol::OffsetCommitResponse>(commit, 8);
  ASSERT_EQ(committed.topics.size(), 2u);
  EXPECT_EQ(committed.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(committed.topics[0].partitions[1].error_code, 0);
  EXPECT_EQ(committed.topics[1].partitions[0].error_code,
            Code(ErrorCode::kUnknownTopicOrPartition));

  // v8: many groups in one request, each answered on its own.
  protocol::OffsetFetchRequest fetch;
  fetch.groups = {
      {"g",
       std::vector<protocol::OffsetFetchRequest::Topic>{{"t", {0, 1}, {}}},
       {}},
      {"g", std::nullopt, {}},
      {"unknown", std::nullopt, {}}};
  fetch.require_stable = true;
  auto fetched = client_->Call<protocol::OffsetFetchResponse>(fetch, 8);
  ASSERT_EQ(fetched.groups.size(), 3u);
  ASSERT_EQ(fetched.groups[0].topics.size(), 1u);
  const auto& parts = fetched.groups[0].topics[0].partitions;
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].committed_offset, 42);
  EXPECT_EQ(parts[0].committed_leader_epoch, 5);
  EXPECT_EQ(parts[0].metadata, "meta");
  EXPECT_EQ(parts[1].committed_offset, 7);
  EXPECT_EQ(parts[1].metadata, "");
  ASSERT_EQ(fetched.groups[1].topics.size(), 1u) << "all committed topics";
  EXPECT_EQ(fetched.groups[1].topics[0].partitions.size(), 2u);
  EXPECT_THAT(fetched.groups[2].topics, IsEmpty());
  EXPECT_EQ(fetched.groups[2].error_code, 0);

  // v6 (flexible, single group) with an injected group-level error.
  broker_->faults().FailRequests({.api_key = 9}, 14 /*LOAD_IN_PROGRESS*/, 1);
  protocol::OffsetFetchRequest single;
  single.group_id = "g";
  auto failed = client_->Call<protocol::OffsetFetchResponse>(single, 6);
  EXPECT_EQ(failed.error_code, Code(ErrorCode::kCoordinatorLoadInProgress));
  EXPECT_THAT(failed.topics, IsEmpty());
  auto ok = client_->Call<protocol::OffsetFetchResponse>(single, 6);
  EXPECT_EQ(ok.error_code, 0);
  ASSERT_EQ(ok.topics.size(), 1u);
}

TEST_F(GroupWireTest, TxnOffsetCommitChecksMembershipAndStaysPending) {
  std::string member = JoinAndSync("g");
  // A transaction of each producer with the group's offsets in it
  // (AddOffsetsToTxn), which the broker verifies a TxnOffsetCommit against.
  auto begin = [&](const std::string& id) {
    protocol::InitProducerIdRequest init;
    init.transactional_id = id;
    init.transaction_timeout_ms = 60000;
    auto producer = client_->Call<protocol::InitProducerIdResponse>(init, 3);
    EXPECT_EQ(producer.error_code, 0);
    protocol::AddOffsetsToTxnRequest add;
    add.transactional_id = id;
    add.producer_id = producer.producer_id;
    add.producer_epoch = producer.producer_epoch;
    add.group_id = "g";
    EXPECT_EQ(
        client_->Call<protocol::AddOffsetsToTxnResponse>(add, 0).error_code, 0);
    return producer;
  };
  const auto first = begin("tx");
  const auto second = begin("tx2");
  protocol::TxnOffsetCommitRequest txn;
  txn.transactional_id = "tx";
  txn.group_id = "g";
  txn.producer_id = first.producer_id;
  txn.producer_epoch = first.producer_epoch;
  txn.generation_id = 2;
  txn.member_id = member;
  txn.topics = {{"t", {{0, 99, -1, "txn", {}}}, {}}};
  auto stale = client_->Call<protocol::TxnOffsetCommitResponse>(txn, 3);
  EXPECT_EQ(stale.topics[0].partitions[0].error_code,
            Code(ErrorCode::kIllegalGeneration));
  txn.generation_id = 1;
  txn.member_id = "someone-else";
  auto unknown = client_->Call<protocol::TxnOffsetCommitResponse>(txn, 3);
  EXPECT_EQ(unknown.topics[0].partitions[0].error_code,
            Code(ErrorCode::kUnknownMemberId));
  txn.member_id = member;
  auto staged = client_->Call<protocol::TxnOffsetCommitResponse>(txn, 3);
  EXPECT_EQ(staged.topics[0].partitions[0].error_code, 0);
  // v0 carries no member: not checked.
  protocol::TxnOffsetCommitRequest v0 = txn;
  v0.transactional_id = "tx2";
  v0.producer_id = second.producer_id;
  v0.producer_epoch = second.producer_epoch;
  v0.topics = {{"t", {{1, 5, -1, std::nullopt, {}}}, {}}};
  auto old = client_->Call<protocol::TxnOffsetCommitResponse>(v0, 0);
  EXPECT_EQ(old.topics[0].partitions[0].error_code, 0);

  protocol::OffsetFetchRequest fetch;
  fetch.group_id = "g";
  fetch.topics =
      std::vector<protocol::OffsetFetchRequest::Topic>{{"t", {0, 1}, {}}};
  fetch.require_stable = true;
  auto stable = client_->Call<protocol::OffsetFetchResponse>(fetch, 7);
  ASSERT_EQ(stable.topics.size(), 1u);
  for (const auto& p : stable.topics[0].partitions) {
    EXPECT_EQ(p.error_code, Code(ErrorCode::kUnstableOffsetCommit));
    EXPECT_EQ(p.committed_offset, -1);
  }
  fetch.require_stable = false;
  auto plain = client_->Call<protocol::OffsetFetchResponse>(fetch, 7);
  for (const auto& p : plain.topics[0].partitions) {
    EXPECT_EQ(p.error_code, 0);
    EXPECT_EQ(p.committed_offset, -1) << "invisible until the txn commits";
  }
  EXPECT_EQ(*broker_->CommittedOffset("g", "t", 0), std::nullopt);

  // Verified against the transaction (KIP-890): a producer the transactional
  // id does not know, and a transaction without the group, are refused.
  protocol::TxnOffsetCommitRequest stranger = txn;
  stranger.producer_id = first.producer_id + 1000;
  EXPECT_EQ(client_->Call<protocol::TxnOffsetCommitResponse>(stranger, 3)
                .topics[0]
                .partitions[0]
                .error_code,
            Code(ErrorCode::kInvalidProducerIdMapping));
  protocol::TxnOffsetCommitRequest elsewhere = txn;
  elsewhere.group_id = "g-not-added";
  elsewhere.generation_id = -1;
  elsewhere.member_id = "";
  EXPECT_EQ(client_->Call<protocol::TxnOffsetCommitResponse>(elsewhere, 3)
                .topics[0]
                .partitions[0]
                .error_code,
            Code(ErrorCode::kInvalidTxnState));
}

TEST_F(GroupWireTest, DescribeListLeaveDeleteAtTheirLatestVersions) {
  std::string member = JoinAndSync("g");
  protocol::DescribeGroupsRequest describe;
  describe.groups = {"g", "nope"};
  describe.include_authorized_operations = true;
  auto described = client_->Call<protocol::DescribeGroupsResponse>(describe, 5);
  ASSERT_EQ(described.groups.size(), 2u);
  const auto& g = described.groups[0];
  EXPECT_EQ(g.error_code, 0);
  EXPECT_EQ(g.group_state, "Stable");
  EXPECT_EQ(g.protocol_type, "consumer");
  EXPECT_EQ(g.protocol_data, "range");
  ASSERT_EQ(g.members.size(), 1u);
  EXPECT_EQ(g.members[0].member_id, member);
  EXPECT_EQ(g.members[0].client_id, "wire-client");
  EXPECT_EQ(g.members[0].client_host, "/127.0.0.1");
  EXPECT_EQ(g.members[0].member_assignment, "the-assignment");
  EXPECT_EQ(g.authorized_operations, (1 << 3) | (1 << 6) | (1 << 8));
  EXPECT_EQ(described.groups[1].group_state, "Dead");

  protocol::ListGroupsRequest list;
  list.states_filter = {"stable"};
  auto listed = client_->Call<protocol::ListGroupsResponse>(list, 4);
  ASSERT_EQ(listed.groups.size(), 1u);
  EXPECT_EQ(listed.groups[0].group_id, "g");
  EXPECT_EQ(listed.groups[0].group_state, "Stable");
  list.states_filter = {"Empty"};
  EXPECT_THAT(client_->Call<protocol::ListGroupsResponse>(list, 4).groups,
              IsEmpty());

  protocol::DeleteGroupsRequest del;
  del.group_names = {"g", "nope"};
  auto not_yet = client_->Call<protocol::DeleteGroupsResponse>(del, 2);
  ASSERT_EQ(not_yet.results.size(), 2u);
  EXPECT_EQ(not_yet.results[0].error_code, Code(ErrorCode::kNonEmptyGroup));
  EXPECT_EQ(not_yet.results[1].error_code, Code(ErrorCode::kGroupIdNotFound));

  protocol::LeaveGroupRequest leave;
  leave.group_id = "g";
  leave.members = {{member, std::nullopt, "bye", {}},
                   {"stranger", std::nullopt, {}, {}}};
  auto left = client_->Call<protocol::LeaveGroupResponse>(leave, 5);
  EXPECT_EQ(left.error_code, 0);
  ASSERT_EQ(left.members.size(), 2u);
  EXPECT_EQ(left.members[0].error_code, 0);
  EXPECT_EQ(left.members[1].error_code, Code(ErrorCode::kUnknownMemberId));

  auto deleted = client_->Call<protocol::DeleteGroupsResponse>(del, 2);
  EXPECT_EQ(deleted.results[0].error_code, 0);
  EXPECT_EQ(client_->Call<protocol::DescribeGroupsResponse>(describe, 5)
                .groups[0]
                .group_state,
            "Dead");
}

TEST_F(GroupWireTest, OffsetDeleteRefusesConsumedTopics) {
  std::string member = JoinAndSync("g");  // subscribed to "t"
  ASSERT_TRUE(broker_->CreateTopic("old", 1).ok());
  protocol::OffsetCommitRequest commit;
  commit.group_id = "g";
  commit.generation_id = 1;
  commit.member_id = member;
  commit.topics = {{"t", {{0, 1, -1, -1, std::nullopt, {}}}, {}},
                   {"old", {{0, 2, -1, -1, std::nullopt, {}}}, {}}};
  client_->Call<protocol::OffsetCommitResponse>(commit, 7);
  protocol::OffsetDeleteRequest del;
  del.group_id = "g";
  del.topics = {{"t", {{0, {}}}, {}}, {"old", {{0, {}}}, {}}};
  auto r = client_->Call<protocol::OffsetDeleteResponse>(del, 0);
  EXPECT_EQ(r.error_code, 0);
  ASSERT_EQ(r.topics.size(), 2u);
  EXPECT_EQ(r.topics[0].partitions[0].error_code,
            Code(ErrorCode::kGroupSubscribedToTopic));
  EXPECT_EQ(r.topics[1].partitions[0].error_code, 0);
  EXPECT_EQ(*broker_->CommittedOffset("g", "t", 0), 1);
  EXPECT_EQ(*broker_->CommittedOffset("g", "old", 0), std::nullopt);
  del.group_id = "missing";
  EXPECT_EQ(client_->Call<protocol::OffsetDeleteResponse>(del, 0).error_code,
            Code(ErrorCode::kGroupIdNotFound));
}

}  // namespace
}  // namespace exactly::broker
