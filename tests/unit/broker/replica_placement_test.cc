#include "controller/replica_placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace exactly::broker {
namespace {

using protocol::ErrorCode;
using ::testing::ElementsAre;

// The table in the comment of Kafka's AdminUtils.assignReplicasToBrokers:
// five brokers, ten partitions, three replicas, both random draws 0.
TEST(ReplicaPlacementTest, MatchesKafkasWorkedExample) {
  const std::vector<int32_t> brokers{0, 1, 2, 3, 4};
  auto r = PlaceReplicasAt(brokers, 0, 10, 3, /*start=*/0, /*shift=*/0);
  ASSERT_EQ(r.size(), 10u);
  EXPECT_THAT(r[0], ElementsAre(0, 1, 2));
  EXPECT_THAT(r[1], ElementsAre(1, 2, 3));
  EXPECT_THAT(r[4], ElementsAre(4, 0, 1));
  // From partition 5 on, followers shift by one more broker.
  EXPECT_THAT(r[5], ElementsAre(0, 2, 3));
  EXPECT_THAT(r[6], ElementsAre(1, 3, 4));
  EXPECT_THAT(r[9], ElementsAre(4, 1, 2));
}

TEST(ReplicaPlacementTest, GrowingATopicContinuesThePattern) {
  const std::vector<int32_t> brokers{1, 2, 3};
  auto all = PlaceReplicas("orders", brokers, 0, 9, 2);
  auto first = PlaceReplicas("orders", brokers, 0, 4, 2);
  auto rest = PlaceReplicas("orders", brokers, 4, 5, 2);
  first.insert(first.end(), rest.begin(), rest.end());
  EXPECT_EQ(first, all);
}

TEST(ReplicaPlacementTest, LeadersAndReplicasSpreadEvenly) {
  const std::vector<int32_t> brokers{1, 2, 3};
  std::map<int32_t, int> leaders, replicas;
  for (const ReplicaList& r : PlaceReplicas("t", brokers, 0, 30, 3)) {
    ASSERT_EQ(r.size(), 3u);
    EXPECT_NE(r[0], r[1]);
    EXPECT_NE(r[1], r[2]);
    EXPECT_NE(r[0], r[2]);
    ++leaders[r[0]];
    for (int32_t id : r) ++replicas[id];
  }
  for (int32_t id : brokers) {
    EXPECT_EQ(leaders[id], 10) << "broker " << id;
    EXPECT_EQ(replicas[id], 30) << "broker " << id;
  }
}

TEST(ReplicaPlacementTest, TheSameTopicIsPlacedTheSameEveryTime) {
  const std::vector<int32_t> brokers{1, 2, 3, 4};
  EXPECT_EQ(PlaceReplicas("payments", brokers, 0, 8, 3),
            PlaceReplicas("payments", brokers, 0, 8, 3));
}

TEST(ReplicaPlacementTest, ReplicationFactorChecks) {
  EXPECT_TRUE(CheckReplicationFactor(3, 3).ok());
  EXPECT_EQ(CheckReplicationFactor(0, 3).code,
            ErrorCode::kInvalidReplicationFactor);
  ApiError too_many = CheckReplicationFactor(4, 3);
  EXPECT_EQ(too_many.code, ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(too_many.message,
            "Replication factor: 4 larger than available brokers: 3.");
}

TEST(ReplicaPlacementTest, AssignmentChecks) {
  const std::vector<int32_t> brokers{1, 2, 3};
  EXPECT_TRUE(CheckAssignments({{1, 2}, {2, 3}}, brokers).ok());
  EXPECT_EQ(CheckAssignments({{1, 2}, {2}}, brokers).code,
            ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(CheckAssignments({{1, 1}}, brokers).code,
            ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(CheckAssignments({{1, 4}}, brokers).code,
            ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(CheckAssignments({{}}, brokers).code,
            ErrorCode::kInvalidReplicaAssignment);
}

}  // namespace
}  // namespace exactly::broker
