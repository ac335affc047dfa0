// The controller's decisions: placement on live brokers, leader election from
// the ISR on a broker's death (unclean only when allowed), leaders returning
// with their brokers, and the checks an ISR change must pass.
#include "controller/controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace exactly::broker {
namespace {

using protocol::ErrorCode;
using ::testing::ElementsAre;

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int32_t id : {1, 2, 3})
      controller_.RegisterBroker(id, "127.0.0.1", 9000 + id);
  }
  PartitionState State(const std::string& topic, int32_t p) {
    const PartitionState* s = controller_.metadata()->partition(topic, p);
    EXPECT_NE(s, nullptr);
    return s ? *s : PartitionState{};
  }
  // A topic with one partition on brokers 1, 2, 3 (1 leads).
  void CreateOnAll(const std::string& name, bool unclean = false) {
    NewTopic t;
    t.name = name;
    t.partitions = -1;
    t.assignments = std::vector<ReplicaList>{{1, 2, 3}};
    t.unclean_leader_election = unclean;
    ASSERT_TRUE(controller_.CreateTopic(t).ok());
  }

  Controller controller_{ControllerOptions{.default_replication_factor = 3}};
};

TEST_F(ControllerTest, NewTopicLeadsOnItsPreferredReplicaWithAllInSync) {
  NewTopic t{.name = "orders", .partitions = 6};
  ASSERT_TRUE(controller_.CreateTopic(t).ok());
  auto m = controller_.metadata();
  ASSERT_NE(m->topic("orders"), nullptr);
  for (int32_t p = 0; p < 6; ++p) {
    const PartitionState* s = m->partition("orders", p);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->replicas.size(), 3u);
    EXPECT_EQ(s->leader, s->replicas.front());
    EXPECT_EQ(s->isr, s->replicas);
    EXPECT_EQ(s->leader_epoch, 0) << "Kafka's first leader epoch";
  }
}

TEST_F(ControllerTest, RefusesWhatKafkaRefuses) {
  EXPECT_EQ(
      controller_.CreateTopic({.name = "a", .replication_factor = 4}).code,
      ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(controller_.CreateTopic({.name = "a", .partitions = 0}).code,
            ErrorCode::kInvalidPartitions);
  NewTopic unknown{.name = "a", .partitions = -1};
  unknown.assignments = std::vector<ReplicaList>{{1, 7}};
  EXPECT_EQ(controller_.CreateTopic(unknown).code,
            ErrorCode::kInvalidReplicaAssignment);
  NewTopic both{.name = "a", .partitions = 2};
  both.assignments = std::vector<ReplicaList>{{1}};
  EXPECT_EQ(controller_.CreateTopic(both).code, ErrorCode::kInvalidRequest);
  ASSERT_TRUE(controller_.CreateTopic({.name = "a"}).ok());
  EXPECT_EQ(controller_.CreateTopic({.name = "a"}).code,
            ErrorCode::kTopicAlreadyExists);
  // Validation only changes nothing.
  ASSERT_TRUE(controller_.CreateTopic({.name = "b"}, true).ok());
  EXPECT_EQ(controller_.metadata()->topic("b"), nullptr);
}

TEST_F(ControllerTest, ReplicationFactorCountsLiveBrokersOnly) {
  controller_.FenceBroker(3);
  EXPECT_EQ(
      controller_.CreateTopic({.name = "t", .replication_factor = 3}).code,
      ErrorCode::kInvalidReplicationFactor);
  ASSERT_TRUE(
      controller_.CreateTopic({.name = "t", .replication_factor = 2}).ok());
  for (int32_t id : State("t", 0).replicas) EXPECT_NE(id, 3);
}

TEST_F(ControllerTest, LeaderDeathElectsTheNextInSyncReplica) {
  CreateOnAll("t");
  const int64_t version = controller_.metadata()->version;
  controller_.FenceBroker(1);
  PartitionState s = State("t", 0);
  EXPECT_EQ(s.leader, 2);
  EXPECT_EQ(s.leader_epoch, 1);
  EXPECT_THAT(s.isr, ElementsAre(2, 3));
  EXPECT_GT(controller_.metadata()->version, version);
  EXPECT_TRUE(controller_.metadata()->broker(1)->fenced);
}

TEST_F(ControllerTest, FollowerDeathOnlyShrinksTheIsr) {
  CreateOnAll("t");
  controller_.FenceBroker(3);
  PartitionState s = State("t", 0);
  EXPECT_EQ(s.leader, 1);
  EXPECT_EQ(s.leader_epoch, 0);
  EXPECT_THAT(s.isr, ElementsAre(1, 2));
}

TEST_F(ControllerTest, WithoutUncleanElectionAPartitionWaitsForItsLastInSync) {
  CreateOnAll("t");
  // The followers fell out of sync; then the leader dies.
  PartitionState s = State("t", 0);
  ASSERT_TRUE(
      controller_.AlterIsr("t", 0, 1, s.leader_epoch, s.partition_epoch, {1})
          .ok());
  controller_.FenceBroker(1);
  s = State("t", 0);
  EXPECT_EQ(s.leader, kNoLeader);
  EXPECT_THAT(s.isr, ElementsAre(1)) << "the last ISR member is kept";
  const int32_t offline_epoch = s.leader_epoch;
  // An out-of-sync replica returning changes nothing...
  controller_.RegisterBroker(2, "127.0.0.1", 9002);
  EXPECT_EQ(State("t", 0).leader, kNoLeader);
  // ...the last in-sync one does.
  controller_.RegisterBroker(1, "127.0.0.1", 9001);
  s = State("t", 0);
  EXPECT_EQ(s.leader, 1);
  EXPECT_GT(s.leader_epoch, offline_epoch);
  EXPECT_THAT(s.isr, ElementsAre(1));
}

TEST_F(ControllerTest, UncleanElectionCrownsAnOutOfSyncReplica) {
  CreateOnAll("t", /*unclean=*/true);
  PartitionState s = State("t", 0);
  ASSERT_TRUE(
      controller_.AlterIsr("t", 0, 1, s.leader_epoch, s.partition_epoch, {1})
          .ok());
  controller_.FenceBroker(1);
  s = State("t", 0);
  EXPECT_EQ(s.leader, 2);
  EXPECT_THAT(s.isr, ElementsAre(2));
}

TEST_F(ControllerTest, TurningUncleanElectionOnBringsAnOfflinePartitionBack) {
  CreateOnAll("t");
  PartitionState s = State("t", 0);
  ASSERT_TRUE(
      controller_.AlterIsr("t", 0, 1, s.leader_epoch, s.partition_epoch, {1})
          .ok());
  controller_.FenceBroker(1);
  ASSERT_EQ(State("t", 0).leader, kNoLeader);
  controller_.SetUncleanLeaderElection("t", true);
  EXPECT_EQ(State("t", 0).leader, 2);
}

TEST_F(ControllerTest, IsrChangesAreCheckedAgainstEpochsAndEligibility) {
  CreateOnAll("t");
  PartitionState s = State("t", 0);
  // Not the leader, or an old epoch.
  EXPECT_EQ(
      controller_.AlterIsr("t", 0, 2, s.leader_epoch, s.partition_epoch, {2})
          .code,
      ErrorCode::kFencedLeaderEpoch);
  EXPECT_EQ(controller_
                .AlterIsr("t", 0, 1, s.leader_epoch - 1, s.partition_epoch, {1})
                .code,
            ErrorCode::kFencedLeaderEpoch);
  // A stale view of the partition.
  EXPECT_EQ(controller_
                .AlterIsr("t", 0, 1, s.leader_epoch, s.partition_epoch - 1, {1})
                .code,
            ErrorCode::kInvalidUpdateVersion);
  // Without the leader, with a non-replica, with a fenced broker.
  EXPECT_EQ(
      controller_.AlterIsr("t", 0, 1, s.leader_epoch, s.partition_epoch, {2, 3})
          .code,
      ErrorCode::kIneligibleReplica);
  controller_.RegisterBroker(4, "127.0.0.1", 9004);
  s = State("t", 0);
  EXPECT_EQ(
      controller_.AlterIsr("t", 0, 1, s.leader_epoch, s.partition_epoch, {1, 4})
          .code,
      ErrorCode::kIneligibleReplica);
  PartitionState shrunk;
  ASSERT_TRUE(controller_
                  .AlterIsr("t", 0, 1, s.leader_epoch, s.partition_epoch,
                            {1, 3}, &shrunk)
                  .ok());
  EXPECT_THAT(shrunk.isr, ElementsAre(1, 3));
  EXPECT_EQ(shrunk.partition_epoch, s.partition_epoch + 1);
  controller_.FenceBroker(2);
  EXPECT_EQ(controller_
                .AlterIsr("t", 0, 1, shrunk.leader_epoch,
                          shrunk.partition_epoch, {1, 2, 3})
                .code,
            ErrorCode::kIneligibleReplica);
  // The ISR is kept in replica order, whatever order it was asked in.
  ASSERT_TRUE(controller_
                  .AlterIsr("t", 0, 1, shrunk.leader_epoch,
                            shrunk.partition_epoch, {3, 1}, &shrunk)
                  .ok());
  EXPECT_THAT(shrunk.isr, ElementsAre(1, 3));
}

TEST_F(ControllerTest, AddPartitionsPlacesAndChecksTheNewOnes) {
  ASSERT_TRUE(
      controller_
          .CreateTopic({.name = "t", .partitions = 2, .replication_factor = 2})
          .ok());
  EXPECT_EQ(controller_.AddPartitions("t", 2, std::nullopt).code,
            ErrorCode::kInvalidPartitions);
  EXPECT_EQ(controller_.AddPartitions("nope", 3, std::nullopt).code,
            ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(
      controller_.AddPartitions("t", 3, std::vector<ReplicaList>{{1, 2, 3}})
          .code,
      ErrorCode::kInvalidReplicaAssignment);
  ASSERT_TRUE(
      controller_
          .AddPartitions("t", 4, std::vector<ReplicaList>{{3, 1}, {2, 3}})
          .ok());
  EXPECT_THAT(State("t", 2).replicas, ElementsAre(3, 1));
  EXPECT_EQ(State("t", 3).leader, 2);
  ASSERT_TRUE(controller_.AddPartitions("t", 6, std::nullopt).ok());
  EXPECT_EQ(State("t", 5).replicas.size(), 2u);
}

TEST_F(ControllerTest, ListenersSeeEveryVersionInOrder) {
  std::vector<int64_t> seen;
  const int handle =
      controller_.Subscribe([&](std::shared_ptr<const ClusterMetadata> m) {
        seen.push_back(m->version);
      });
  ASSERT_EQ(seen.size(), 1u) << "told the current state at once";
  CreateOnAll("t");
  controller_.FenceBroker(2);
  controller_.RegisterBroker(2, "127.0.0.1", 9002);
  ASSERT_EQ(seen.size(), 4u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_EQ(seen[i], seen[i - 1] + 1);
  controller_.Unsubscribe(handle);
  controller_.DeleteTopic("t");
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(controller_.metadata()->topic("t"), nullptr);
}

TEST_F(ControllerTest, ProducerIdBlocksNeverOverlap) {
  absl::StatusOr<Controller::ProducerIdBlock> a =
      controller_.AllocateProducerIds();
  absl::StatusOr<Controller::ProducerIdBlock> b =
      controller_.AllocateProducerIds();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->count, 0);
  EXPECT_GE(b->first, a->first + a->count);
}

}  // namespace
}  // namespace exactly::broker
