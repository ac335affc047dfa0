// Which broker coordinates a key: Kafka's hash partition, then a fixed broker
// for that partition.
#include "cluster/coordinator_placement.h"

#include "gtest/gtest.h"

namespace exactly::broker {
namespace {

TEST(CoordinatorPlacementTest, PartitionIsKafkasPartitionFor) {
  // Java's "hello".hashCode() is 99162322.
  EXPECT_EQ(CoordinatorPartition("hello"), 99162322 % 50);
  // Java's "polygenelubricants".hashCode() is Integer.MIN_VALUE, which
  // Kafka's Utils.abs maps to 0.
  EXPECT_EQ(CoordinatorPartition("polygenelubricants"), 0);
  EXPECT_EQ(CoordinatorPartition(""), 0);
  for (const char* key : {"a", "orders-writer", "group-7", "\xff\xfe"}) {
    const int32_t p = CoordinatorPartition(key);
    EXPECT_GE(p, 0) << key;
    EXPECT_LT(p, kCoordinatorPartitions) << key;
  }
}

ClusterMetadata Brokers(std::initializer_list<std::pair<int32_t, bool>> ids) {
  ClusterMetadata m;
  for (auto [id, fenced] : ids)
    m.brokers[id] = BrokerInfo{id, "h", 9000 + id, fenced};
  return m;
}

TEST(CoordinatorPlacementTest, PartitionsSpreadOverRegisteredBrokers) {
  ClusterMetadata m = Brokers({{1, false}, {2, false}, {3, false}});
  EXPECT_EQ(CoordinatorBrokerOf(m, 0)->node_id, 1);
  EXPECT_EQ(CoordinatorBrokerOf(m, 1)->node_id, 2);
  EXPECT_EQ(CoordinatorBrokerOf(m, 2)->node_id, 3);
  EXPECT_EQ(CoordinatorBrokerOf(m, 49)->node_id, 2);
  EXPECT_EQ(CoordinatorBrokerOf(ClusterMetadata{}, 0), nullptr);
}

TEST(CoordinatorPlacementTest, ADeadBrokerKeepsItsKeys) {
  // No failover yet (issue 20): a fenced broker still coordinates its
  // partitions, and callers see it is fenced.
  ClusterMetadata m = Brokers({{1, false}, {2, true}, {3, false}});
  const BrokerInfo* b = CoordinatorBrokerOf(m, 1);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->node_id, 2);
  EXPECT_TRUE(b->fenced);
}

}  // namespace
}  // namespace exactly::broker
