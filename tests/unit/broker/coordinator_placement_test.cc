// Which partition of a coordinator topic a key hashes to (Kafka's
// partitionFor), and the topics of each kind of coordinator.
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

TEST(CoordinatorPlacementTest, EachKindHasKafkasTopic) {
  EXPECT_EQ(CoordinatorTopic(CoordinatorKind::kGroup), "__consumer_offsets");
  EXPECT_EQ(CoordinatorTopic(CoordinatorKind::kTransaction),
            "__transaction_state");
  EXPECT_TRUE(IsInternalTopic("__consumer_offsets"));
  EXPECT_TRUE(IsInternalTopic("__transaction_state"));
  EXPECT_FALSE(IsInternalTopic("consumer_offsets"));
}

}  // namespace
}  // namespace exactly::broker
