// The group coordinator without a network: offsets (regular and
// transactional), what OffsetFetch sees when, deletion, and what a restarted
// coordinator loads back from its store.
#include "group/group_coordinator.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/serde.h"
#include "support/temp_dir.h"
#include "unit/group/manual_clock.h"

namespace exactly::broker {
namespace {

using ::exactly::broker::testing::ManualClock;
using ::exactly::testing::TempDir;
using protocol::ErrorCode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The broker's commit pipeline without an event loop: Commit() is the end of
// a loop turn (the store's write, then the waiting callbacks).
class FakeCommitQueue : public CommitQueue {
 public:
  void AfterCommit(
      absl::AnyInvocable<void(const absl::Status&)> done) override {
    waiting_.push_back(std::move(done));
  }
  void CommitSoon() override {}
  void Commit(Store* store) {
    absl::Status s = store == nullptr ? absl::OkStatus() : store->Commit();
    if (fail_next_) {
      s = absl::UnavailableError("disk on fire");
      fail_next_ = false;
    }
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& done : waiting) done(s);
  }
  void FailNextCommit() { fail_next_ = true; }

 private:
  std::vector<absl::AnyInvocable<void(const absl::Status&)>> waiting_;
  bool fail_next_ = false;
};

class GroupCoordinatorTest : public ::testing::Test {
 protected:
  GroupCoordinatorTest() { Open(""); }

  // A coordinator over a store in `dir` ("" for memory), as the broker makes
  // one at start-up.
  void Open(const std::string& dir) {
    if (coordinator_) Commit();  // what a clean shutdown commits
    coordinator_.reset();
    store_.reset();
    if (!dir.empty()) {
      absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({dir});
      ASSERT_TRUE(store.ok()) << store.status();
      store_ = std::move(*store);
    }
    auto clock = std::make_unique<ManualClock>();
    clock_ = clock.get();
    BrokerOptions options;
    options.group_min_session_timeout_ms = 1000;
    options.group_max_session_timeout_ms = 60000;
    coordinator_ = std::make_unique<GroupCoordinator>(options, std::move(clock),
                                                      store_.get(), commits_);
    ASSERT_TRUE(coordinator_->Load().ok());
  }

  // Runs the pending group commit and its callbacks.
  void Commit() { commits_.Commit(store_.get()); }

  std::vector<ErrorCode> CommitOffsets(const std::string& group,
                                       std::vector<OffsetCommitItem> items,
                                       int32_t generation = -1,
                                       const std::string& member = "") {
    std::optional<std::vector<OffsetCommitItem>> out;
    coordinator_->CommitOffsets(
        group, generation, member, std::nullopt, std::move(items),
        [&](std::vector<OffsetCommitItem> done) { out = std::move(done); });
    Commit();
    EXPECT_TRUE(out.has_value());
    std::vector<ErrorCode> errors;
    if (out) {
      for (const OffsetCommitItem& i : *out) errors.push_back(i.error);
    }
    return errors;
  }

  FetchedOffset Fetch(const std::string& group, const std::string& topic,
                      int32_t partition, bool require_stable = false) {
    std::vector<FetchedOffset> f = coordinator_->FetchOffsets(
        group, std::vector<TopicPartition>{{topic, partition}}, require_stable);
    EXPECT_EQ(f.size(), 1u);
    return f.empty() ? FetchedOffset{} : f[0];
  }

  // A member in a Stable group `group` (generation 1) subscribed to
  // `topic`; returns its member id.
  std::string StableMember(const std::string& group, const std::string& topic) {
    std::string metadata;
    protocol::Encoder e(&metadata, 0, false);
    e.Int16(0);
    e.Int32(1);
    e.String(topic);
    e.Int32(-1);
    JoinArgs a;
    a.client_id = "c";
    a.session_timeout_ms = 10000;
    a.rebalance_timeout_ms = 10000;
    a.protocol_type = "consumer";
    a.protocols = {{"range", metadata}};
    std::optional<JoinResult> joined;
    coordinator_->JoinGroup(group, a,
                            [&](JoinResult r) { joined = std::move(r); });
    clock_->Advance(0);
    EXPECT_TRUE(joined.has_value());
    std::string id = joined->member_id;
    SyncArgs s;
    s.generation = 1;
    s.member_id = id;
    s.assignments[id] = "assignment";
    std::optional<SyncResult> synced;
    coordinator_->SyncGroup(group, s,
                            [&](SyncResult r) { synced = std::move(r); });
    Commit();
    EXPECT_TRUE(synced.has_value());
    EXPECT_EQ(coordinator_->FindGroup(group)->state(), GroupState::kStable);
    return id;
  }

  FakeCommitQueue commits_;
  std::unique_ptr<Store> store_;
  ManualClock* clock_ = nullptr;
  std::unique_ptr<GroupCoordinator> coordinator_;
};

TEST_F(GroupCoordinatorTest, CommittedOffsetsAreFetchedWithMetadata) {
  EXPECT_THAT(CommitOffsets("g", {{"t", 0, 42, 3, "meta-0"},
                                  {"t", 1, 7, -1, std::nullopt},
                                  {"t", 2, 9, -1, std::string(5000, 'x')}}),
              ElementsAre(ErrorCode::kNone, ErrorCode::kNone,
                          ErrorCode::kOffsetMetadataTooLarge));
  FetchedOffset f = Fetch("g", "t", 0);
  EXPECT_EQ(f.error, ErrorCode::kNone);
  EXPECT_EQ(f.offset, 42);
  EXPECT_EQ(f.leader_epoch, 3);
  EXPECT_EQ(f.metadata, "meta-0");
  EXPECT_EQ(Fetch("g", "t", 1).metadata, "") << "null metadata reads as \"\"";
  EXPECT_EQ(Fetch("g", "t", 2).offset, -1);
  EXPECT_EQ(Fetch("g", "other", 0).offset, -1);
  EXPECT_EQ(Fetch("unknown-group", "t", 0).offset, -1);
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 1), 7);
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 2), std::nullopt);
  // Every committed partition when none is named.
  EXPECT_EQ(coordinator_->FetchOffsets("g", std::nullopt, false).size(), 2u);
  // A group made by commits alone is an Empty group without protocol.
  std::vector<GroupOverview> groups = coordinator_->ListGroups({});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].state, "Empty");
  EXPECT_EQ(groups[0].protocol_type, "");
}

TEST_F(GroupCoordinatorTest, CommitsAreCheckedAgainstTheGroup) {
  EXPECT_THAT(CommitOffsets("nobody-knows", {{"t", 0, 1}}, 5, "m"),
              ElementsAre(ErrorCode::kIllegalGeneration));
  std::string id = StableMember("g", "t");
  EXPECT_THAT(CommitOffsets("g", {{"t", 0, 1}}),
              ElementsAre(ErrorCode::kUnknownMemberId))
      << "outsiders may not commit while the group has members";
  EXPECT_THAT(CommitOffsets("g", {{"t", 0, 1}}, 2, id),
              ElementsAre(ErrorCode::kIllegalGeneration));
  EXPECT_THAT(CommitOffsets("g", {{"t", 0, 1}}, 1, "ghost"),
              ElementsAre(ErrorCode::kUnknownMemberId));
  EXPECT_THAT(CommitOffsets("g", {{"t", 0, 1}}, 1, id),
              ElementsAre(ErrorCode::kNone));
  // Items that arrive with an error (unknown topic) are left alone.
  std::vector<OffsetCommitItem> items = {{"t", 1, 5}};
  items[0].error = ErrorCode::kUnknownTopicOrPartition;
  EXPECT_THAT(CommitOffsets("g", items, 1, id),
              ElementsAre(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 1), std::nullopt);
}

TEST_F(GroupCoordinatorTest, JoinChecksGroupIdAndSessionTimeout) {
  std::optional<JoinResult> r;
  auto capture = [&](JoinResult result) { r = std::move(result); };
  JoinArgs a;
  a.session_timeout_ms = 500;
  a.rebalance_timeout_ms = 500;
  a.protocol_type = "consumer";
  a.protocols = {{"range", ""}};
  coordinator_->JoinGroup("g", a, capture);
  EXPECT_EQ(r->error, ErrorCode::kInvalidSessionTimeout);
  a.session_timeout_ms = 61000;
  coordinator_->JoinGroup("g", a, capture);
  EXPECT_EQ(r->error, ErrorCode::kInvalidSessionTimeout);
  a.session_timeout_ms = 6000;
  coordinator_->JoinGroup("", a, capture);
  EXPECT_EQ(r->error, ErrorCode::kInvalidGroupId);
  a.member_id = "stale";
  coordinator_->JoinGroup("g", a, capture);
  EXPECT_EQ(r->error, ErrorCode::kUnknownMemberId);
  EXPECT_EQ(coordinator_->FindGroup("g"), nullptr);
  EXPECT_EQ(coordinator_->Heartbeat("g", "stale", std::nullopt, 1),
            ErrorCode::kUnknownMemberId);
}

TEST_F(GroupCoordinatorTest, RequireStableWhileACommitIsBeingWritten) {
  CommitOffsets("g", {{"t", 0, 10}});
  bool answered = false;
  coordinator_->CommitOffsets(
      "g", -1, "", std::nullopt, {{"t", 0, 20}},
      [&](std::vector<OffsetCommitItem>) { answered = true; });
  EXPECT_FALSE(answered);
  EXPECT_EQ(Fetch("g", "t", 0, true).error, ErrorCode::kUnstableOffsetCommit);
  EXPECT_EQ(Fetch("g", "t", 0).offset, 10) << "not durable yet";
  Commit();
  EXPECT_TRUE(answered);
  FetchedOffset f = Fetch("g", "t", 0, true);
  EXPECT_EQ(f.error, ErrorCode::kNone);
  EXPECT_EQ(f.offset, 20);
}

TEST_F(GroupCoordinatorTest, FailedWriteIsNotCoordinatorAndNotApplied) {
  CommitOffsets("g", {{"t", 0, 10}});
  commits_.FailNextCommit();
  EXPECT_THAT(CommitOffsets("g", {{"t", 0, 20}}),
              ElementsAre(ErrorCode::kNotCoordinator));
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 0), 10);
  EXPECT_EQ(Fetch("g", "t", 0, true).error, ErrorCode::kNone)
      << "nothing left in flight";
}

TEST_F(GroupCoordinatorTest, TxnOffsetsAreInvisibleUntilTheTransactionCommits) {
  CommitOffsets("g", {{"t", 0, 5}});
  ASSERT_TRUE(coordinator_
                  ->StageTxnOffsets("g", 1000, 0,
                                    {{"t", 0, 50, "txn-meta"}, {"t", 1, 60}})
                  .ok());
  EXPECT_TRUE(coordinator_->HasPendingTxnOffsets("g", "t", 0));
  EXPECT_TRUE(coordinator_->HasPendingTxnOffsets("g", "t", 1));
  EXPECT_FALSE(coordinator_->HasPendingTxnOffsets("g", "t", 2));
  EXPECT_FALSE(coordinator_->HasPendingTxnOffsets("other", "t", 0));
  EXPECT_EQ(Fetch("g", "t", 0).offset, 5);
  EXPECT_EQ(Fetch("g", "t", 1).offset, -1);
  EXPECT_EQ(Fetch("g", "t", 1, true).error, ErrorCode::kUnstableOffsetCommit);
  coordinator_->CompleteTxnOffsets("g", 1000, /*commit=*/true);
  EXPECT_FALSE(coordinator_->HasPendingTxnOffsets("g", "t", 0));
  FetchedOffset f = Fetch("g", "t", 0, true);
  EXPECT_EQ(f.offset, 50);
  EXPECT_EQ(f.metadata, "txn-meta");
  EXPECT_EQ(Fetch("g", "t", 1, true).offset, 60);
}

TEST_F(GroupCoordinatorTest, AbortedTxnOffsetsAreDropped) {
  CommitOffsets("g", {{"t", 0, 5}});
  ASSERT_TRUE(coordinator_->StageTxnOffsets("g", 7, 0, {{"t", 0, 50}}).ok());
  coordinator_->CompleteTxnOffsets("g", 7, /*commit=*/false);
  EXPECT_FALSE(coordinator_->HasPendingTxnOffsets("g", "t", 0));
  EXPECT_EQ(Fetch("g", "t", 0, true).offset, 5);
  // Completing again (or an unknown producer or group) changes nothing.
  coordinator_->CompleteTxnOffsets("g", 7, true);
  coordinator_->CompleteTxnOffsets("nope", 7, true);
  EXPECT_EQ(Fetch("g", "t", 0).offset, 5);
}

TEST_F(GroupCoordinatorTest, RegularCommitAfterTheTxnOffsetCommitIsKept) {
  ASSERT_TRUE(coordinator_->StageTxnOffsets("g", 7, 0, {{"t", 0, 50}}).ok());
  CommitOffsets("g", {{"t", 0, 80}});  // recorded after the txn's offset
  coordinator_->CompleteTxnOffsets("g", 7, true);
  EXPECT_EQ(Fetch("g", "t", 0).offset, 80);

  CommitOffsets("g", {{"t", 1, 10}});  // recorded before
  ASSERT_TRUE(coordinator_->StageTxnOffsets("g", 8, 0, {{"t", 1, 30}}).ok());
  coordinator_->CompleteTxnOffsets("g", 8, true);
  EXPECT_EQ(Fetch("g", "t", 1).offset, 30);
}

TEST_F(GroupCoordinatorTest, OlderProducerEpochIsFenced) {
  ASSERT_TRUE(coordinator_->StageTxnOffsets("g", 7, 3, {{"t", 0, 1}}).ok());
  ApiError e = coordinator_->StageTxnOffsets("g", 7, 2, {{"t", 0, 2}});
  EXPECT_EQ(e.code, ErrorCode::kInvalidProducerEpoch);
  EXPECT_TRUE(coordinator_->StageTxnOffsets("g", 7, 4, {{"t", 0, 3}}).ok());
  EXPECT_EQ(coordinator_->StageTxnOffsets("", 7, 4, {{"t", 0, 3}}).code,
            ErrorCode::kInvalidGroupId);
  coordinator_->CompleteTxnOffsets("g", 7, true);
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 0), 3);
}

TEST_F(GroupCoordinatorTest, TxnOffsetCommitV3ChecksTheConsumerGeneration) {
  std::string id = StableMember("g", "t");
  EXPECT_EQ(coordinator_->ValidateTxnOffsetCommit("g", 1, id, std::nullopt),
            ErrorCode::kNone);
  EXPECT_EQ(coordinator_->ValidateTxnOffsetCommit("g", 0, id, std::nullopt),
            ErrorCode::kIllegalGeneration);
  EXPECT_EQ(coordinator_->ValidateTxnOffsetCommit("g", 1, "x", std::nullopt),
            ErrorCode::kUnknownMemberId);
  // Before v3 there is no member to check.
  EXPECT_EQ(coordinator_->ValidateTxnOffsetCommit("g", -1, "", std::nullopt),
            ErrorCode::kNone);
  EXPECT_EQ(coordinator_->ValidateTxnOffsetCommit("", -1, "", std::nullopt),
            ErrorCode::kInvalidGroupId);
}

TEST_F(GroupCoordinatorTest, ForgetTopicDropsCommittedAndPendingOffsets) {
  CommitOffsets("g1", {{"gone", 0, 1}, {"kept", 0, 2}});
  CommitOffsets("g2", {{"gone", 3, 4}});
  ASSERT_TRUE(coordinator_->StageTxnOffsets("g1", 9, 0, {{"gone", 1, 5}}).ok());
  coordinator_->ForgetTopic("gone");
  EXPECT_EQ(coordinator_->CommittedOffset("g1", "gone", 0), std::nullopt);
  EXPECT_EQ(coordinator_->CommittedOffset("g2", "gone", 3), std::nullopt);
  EXPECT_EQ(coordinator_->CommittedOffset("g1", "kept", 0), 2);
  EXPECT_FALSE(coordinator_->HasPendingTxnOffsets("g1", "gone", 1));
  coordinator_->CompleteTxnOffsets("g1", 9, true);
  EXPECT_EQ(coordinator_->CommittedOffset("g1", "gone", 1), std::nullopt);
}

TEST_F(GroupCoordinatorTest, DeleteGroupsOnlyWhenEmpty) {
  std::string id = StableMember("busy", "t");
  CommitOffsets("idle", {{"t", 0, 1}});
  std::optional<std::vector<ErrorCode>> errors;
  coordinator_->DeleteGroups({"busy", "idle", "never"},
                             [&](std::vector<ErrorCode> e) { errors = e; });
  Commit();
  ASSERT_TRUE(errors.has_value());
  EXPECT_THAT(*errors, ElementsAre(ErrorCode::kNonEmptyGroup, ErrorCode::kNone,
                                   ErrorCode::kGroupIdNotFound));
  EXPECT_EQ(coordinator_->CommittedOffset("idle", "t", 0), std::nullopt);
  EXPECT_EQ(coordinator_->DescribeGroup("idle").state, "Dead");
  EXPECT_EQ(coordinator_->DescribeGroup("busy").state, "Stable");
}

TEST_F(GroupCoordinatorTest, OffsetDeleteRefusesTopicsTheGroupConsumes) {
  std::string id = StableMember("g", "consumed");
  CommitOffsets("g", {{"consumed", 0, 1}, {"old", 0, 2}}, 1, id);
  std::optional<ErrorCode> group_error;
  std::vector<GroupCoordinator::OffsetDeleteItem> result;
  coordinator_->DeleteOffsets(
      "g", {{"consumed", 0}, {"old", 0}},
      [&](ErrorCode e, std::vector<GroupCoordinator::OffsetDeleteItem> items) {
        group_error = e;
        result = std::move(items);
      });
  Commit();
  ASSERT_EQ(group_error, ErrorCode::kNone);
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[0].error, ErrorCode::kGroupSubscribedToTopic);
  EXPECT_EQ(result[1].error, ErrorCode::kNone);
  EXPECT_EQ(coordinator_->CommittedOffset("g", "consumed", 0), 1);
  EXPECT_EQ(coordinator_->CommittedOffset("g", "old", 0), std::nullopt);
  coordinator_->DeleteOffsets(
      "missing", {{"old", 0}},
      [&](ErrorCode e, std::vector<GroupCoordinator::OffsetDeleteItem>) {
        group_error = e;
      });
  EXPECT_EQ(group_error, ErrorCode::kGroupIdNotFound);
  // "" names no group here, unlike for OffsetCommit (as Kafka's
  // isValidGroupId).
  coordinator_->DeleteOffsets(
      "", {{"old", 0}},
      [&](ErrorCode e, std::vector<GroupCoordinator::OffsetDeleteItem>) {
        group_error = e;
      });
  EXPECT_EQ(group_error, ErrorCode::kInvalidGroupId);
}

TEST_F(GroupCoordinatorTest, ListAndDescribeGroups) {
  std::string id = StableMember("a", "t");
  CommitOffsets("b", {{"t", 0, 1}});
  std::vector<GroupOverview> all = coordinator_->ListGroups({});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].group_id, "a");
  EXPECT_EQ(all[0].protocol_type, "consumer");
  EXPECT_EQ(all[0].state, "Stable");
  std::vector<GroupOverview> stable = coordinator_->ListGroups({"stable"});
  ASSERT_EQ(stable.size(), 1u);
  EXPECT_EQ(stable[0].group_id, "a");
  EXPECT_THAT(coordinator_->ListGroups({"Dead"}), IsEmpty());
  GroupSummary s = coordinator_->DescribeGroup("a");
  EXPECT_EQ(s.state, "Stable");
  EXPECT_EQ(s.protocol, "range");
  ASSERT_EQ(s.members.size(), 1u);
  EXPECT_EQ(s.members[0].id, id);
  EXPECT_EQ(s.members[0].assignment, "assignment");
  GroupSummary dead = coordinator_->DescribeGroup("zzz");
  EXPECT_EQ(dead.state, "Dead");
  EXPECT_THAT(dead.members, IsEmpty());
}

TEST_F(GroupCoordinatorTest, RestartWithStoreKeepsOffsetsPendingTxnsAndGroups) {
  TempDir dir;
  Open(dir.path());
  std::string id = StableMember("g", "t");
  CommitOffsets("g", {{"t", 0, 42, 1, "meta"}}, 1, id);
  CommitOffsets("simple", {{"t", 1, 7}});
  ASSERT_TRUE(coordinator_->StageTxnOffsets("g", 5, 2, {{"t", 1, 99}}).ok());
  ASSERT_TRUE(coordinator_->StageTxnOffsets("g", 6, 0, {{"t", 2, 11}}).ok());
  CommitOffsets("g", {{"t", 0, 43, 1, "meta2"}}, 1, id);  // after the txns
  Commit();

  Open(dir.path());  // a restarted broker
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 0), 43);
  EXPECT_EQ(Fetch("g", "t", 0).metadata, "meta2");
  EXPECT_EQ(coordinator_->CommittedOffset("simple", "t", 1), 7);
  EXPECT_TRUE(coordinator_->HasPendingTxnOffsets("g", "t", 1));
  EXPECT_TRUE(coordinator_->HasPendingTxnOffsets("g", "t", 2));
  // The group is back, Stable at its generation: its member carries on.
  const Group* g = coordinator_->FindGroup("g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->state(), GroupState::kStable);
  EXPECT_EQ(g->generation(), 1);
  EXPECT_EQ(coordinator_->Heartbeat("g", id, std::nullopt, 1),
            ErrorCode::kNone);
  // The transaction coordinator completes what was pending.
  coordinator_->CompleteTxnOffsets("g", 5, true);
  coordinator_->CompleteTxnOffsets("g", 6, false);
  Commit();

  Open(dir.path());
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 1), 99);
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 2), std::nullopt);
  EXPECT_FALSE(coordinator_->HasPendingTxnOffsets("g", "t", 1));
  EXPECT_FALSE(coordinator_->HasPendingTxnOffsets("g", "t", 2));
  // A regular commit after a restart still orders after the ones before.
  ASSERT_TRUE(coordinator_->StageTxnOffsets("g", 8, 0, {{"t", 0, 1}}).ok());
  CommitOffsets("g", {{"t", 0, 500}}, 1, id);
  coordinator_->CompleteTxnOffsets("g", 8, true);
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 0), 500);

  // Deleted groups stay deleted.
  std::string member = id;
  ASSERT_EQ(coordinator_->LeaveGroup("g", {{member, std::nullopt}}).members[0],
            ErrorCode::kNone);
  Commit();
  EXPECT_EQ(coordinator_->FindGroup("g")->state(), GroupState::kEmpty);
  coordinator_->DeleteGroups({"g"}, [](std::vector<ErrorCode>) {});
  Commit();
  Open(dir.path());
  EXPECT_EQ(coordinator_->FindGroup("g"), nullptr);
  EXPECT_EQ(coordinator_->CommittedOffset("g", "t", 0), std::nullopt);
  EXPECT_EQ(coordinator_->CommittedOffset("simple", "t", 1), 7);
}

}  // namespace
}  // namespace exactly::broker
