// A leader's bookkeeping of its followers: the high watermark is what every
// in-sync replica holds; a follower that stops catching up for longer than
// replica.lag.time.max.ms leaves the ISR; one that catches up may rejoin.
#include "replication/replica_tracker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace exactly::broker {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kLagMaxMs = 30000;

class ReplicaTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override { tracker_.BecomeLeader(1, {1, 2, 3}, {1, 2, 3}, 0); }
  ReplicaTracker tracker_;
};

TEST_F(ReplicaTrackerTest, HighWatermarkIsTheLeastEndInTheIsr) {
  EXPECT_EQ(tracker_.HighWatermark(10), 0) << "followers not heard from yet";
  ASSERT_TRUE(tracker_.OnFollowerFetch(2, 10, 5, 10));
  EXPECT_EQ(tracker_.HighWatermark(10), 0);
  ASSERT_TRUE(tracker_.OnFollowerFetch(3, 7, 5, 10));
  EXPECT_EQ(tracker_.HighWatermark(10), 7);
  ASSERT_TRUE(tracker_.OnFollowerFetch(3, 10, 6, 12));
  EXPECT_EQ(tracker_.HighWatermark(12), 10);
  // A follower out of the ISR holds nothing back.
  tracker_.SetIsr({1, 2});
  EXPECT_EQ(tracker_.HighWatermark(12), 10);
  ASSERT_TRUE(tracker_.OnFollowerFetch(2, 12, 7, 12));
  EXPECT_EQ(tracker_.HighWatermark(12), 12);
  // The leader alone: its own log end.
  tracker_.SetIsr({1});
  EXPECT_EQ(tracker_.HighWatermark(20), 20);
}

TEST_F(ReplicaTrackerTest, NonReplicasAreRefused) {
  EXPECT_FALSE(tracker_.OnFollowerFetch(4, 0, 0, 0));
  EXPECT_EQ(tracker_.log_end_offset(4), -1);
}

TEST_F(ReplicaTrackerTest, AFollowerThatStopsFetchingLeavesAfterTheLagTime) {
  ASSERT_TRUE(tracker_.OnFollowerFetch(2, 0, 0, 0));
  ASSERT_TRUE(tracker_.OnFollowerFetch(3, 0, 0, 0));
  // The log grows; 2 keeps up, 3 never fetches again.
  for (int64_t t = 1000; t <= kLagMaxMs; t += 1000)
    ASSERT_TRUE(tracker_.OnFollowerFetch(2, t / 1000, t, t / 1000));
  const int64_t end = kLagMaxMs / 1000;
  EXPECT_THAT(tracker_.LaggingFollowers(kLagMaxMs, end, kLagMaxMs), IsEmpty())
      << "exactly the lag time: still in";
  EXPECT_THAT(tracker_.LaggingFollowers(kLagMaxMs + 1, end, kLagMaxMs),
              ElementsAre(3));
}

TEST_F(ReplicaTrackerTest, AnIdleLogDropsNoOne) {
  // Nothing is written: a follower whose log ends at the leader's is caught
  // up however long ago it fetched.
  ASSERT_TRUE(tracker_.OnFollowerFetch(2, 5, 0, 5));
  ASSERT_TRUE(tracker_.OnFollowerFetch(3, 5, 0, 5));
  EXPECT_THAT(tracker_.LaggingFollowers(10 * kLagMaxMs, 5, kLagMaxMs),
              IsEmpty());
}

TEST_F(ReplicaTrackerTest, ReachingThePreviousLogEndCountsAsCaughtUpThen) {
  // A busy log: 3 is always one fetch behind the end, never at it, yet each
  // fetch covers what the log held at its previous one, so it stays.
  int64_t end = 0;
  for (int64_t t = 0; t <= 100000; t += 500) {
    const int64_t previous_end = end;
    end += 10;
    ASSERT_TRUE(tracker_.OnFollowerFetch(2, end, t, end));
    ASSERT_TRUE(tracker_.OnFollowerFetch(3, previous_end, t, end));
  }
  EXPECT_THAT(tracker_.LaggingFollowers(100000, end, kLagMaxMs), IsEmpty());
}

TEST_F(ReplicaTrackerTest, ACaughtUpFollowerMayRejoin) {
  tracker_.SetIsr({1, 2});
  ASSERT_TRUE(tracker_.OnFollowerFetch(2, 50, 0, 50));
  ASSERT_TRUE(tracker_.OnFollowerFetch(3, 30, 0, 50));
  const int64_t hw = tracker_.HighWatermark(50);
  EXPECT_EQ(hw, 50);
  EXPECT_THAT(tracker_.CaughtUpFollowers(hw, 0), IsEmpty());
  ASSERT_TRUE(tracker_.OnFollowerFetch(3, 50, 1, 55));
  EXPECT_THAT(tracker_.CaughtUpFollowers(hw, 0), ElementsAre(3));
  // Not before it holds the start of the leader's current epoch.
  EXPECT_THAT(tracker_.CaughtUpFollowers(hw, 52), IsEmpty());
}

TEST_F(ReplicaTrackerTest, ANewLeaderForgetsWhatItKnewOfFollowers) {
  ASSERT_TRUE(tracker_.OnFollowerFetch(2, 50, 0, 50));
  tracker_.BecomeLeader(1, {1, 2, 3}, {1, 2}, 1000);
  EXPECT_EQ(tracker_.log_end_offset(2), -1);
  // Until 2 fetches, it counts as caught up from the moment of the election.
  EXPECT_THAT(tracker_.LaggingFollowers(1000 + kLagMaxMs, 60, kLagMaxMs),
              IsEmpty());
  EXPECT_THAT(tracker_.LaggingFollowers(1001 + kLagMaxMs, 60, kLagMaxMs),
              ElementsAre(2));
}

}  // namespace
}  // namespace exactly::broker
