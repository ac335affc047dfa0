// OffsetForLeaderEpoch's answers and the cache's upkeep, case by case as
// Kafka's LeaderEpochFileCache behaves (KIP-101, KIP-279).
#include "replication/leader_epoch_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace exactly::broker {
namespace {

using ::testing::ElementsAre;

LeaderEpochCache Cache(std::initializer_list<EpochEntry> entries) {
  LeaderEpochCache c;
  for (const EpochEntry& e : entries) c.Assign(e.epoch, e.start_offset);
  return c;
}

TEST(LeaderEpochCacheTest, TheLatestEpochEndsAtTheLogEnd) {
  LeaderEpochCache c = Cache({{1, 0}, {3, 10}});
  EXPECT_EQ(c.EndOffsetFor(3, 25), (EpochEndOffset{3, 25}));
}

TEST(LeaderEpochCacheTest, AnOlderEpochEndsWhereTheNextStarts) {
  LeaderEpochCache c = Cache({{1, 0}, {3, 10}, {4, 17}});
  EXPECT_EQ(c.EndOffsetFor(1, 25), (EpochEndOffset{1, 10}));
  EXPECT_EQ(c.EndOffsetFor(3, 25), (EpochEndOffset{3, 17}));
}

TEST(LeaderEpochCacheTest, AnEpochThisLogNeverHadAnswersTheLastSharedOne) {
  // A follower that wrote in epoch 2 asks a leader that never had epoch 2:
  // epoch 1 is the last they share, and it ended at 10.
  LeaderEpochCache c = Cache({{1, 0}, {3, 10}});
  EXPECT_EQ(c.EndOffsetFor(2, 25), (EpochEndOffset{1, 10}));
}

TEST(LeaderEpochCacheTest, AnEpochBeforeAllKnownEndsWhereTheFirstStarts) {
  LeaderEpochCache c = Cache({{5, 40}, {6, 50}});
  EXPECT_EQ(c.EndOffsetFor(2, 60), (EpochEndOffset{2, 40}));
}

TEST(LeaderEpochCacheTest, UndefinedOrFutureEpochsHaveNoAnswer) {
  LeaderEpochCache c = Cache({{1, 0}, {3, 10}});
  EXPECT_EQ(c.EndOffsetFor(kUndefinedEpoch, 25), EpochEndOffset{});
  EXPECT_EQ(c.EndOffsetFor(7, 25), EpochEndOffset{});
  EXPECT_EQ(LeaderEpochCache().EndOffsetFor(1, 0), EpochEndOffset{});
}

TEST(LeaderEpochCacheTest, AssignKeepsBothColumnsAscending) {
  LeaderEpochCache c = Cache({{1, 0}, {2, 10}});
  c.Assign(2, 15);  // the latest epoch again, later: nothing new
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{1, 0}, EpochEntry{2, 10}));
  c.Assign(2, 5);  // the latest epoch started earlier than thought
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{1, 0}, EpochEntry{2, 5}));
  c.Assign(4, 5);  // epoch 2 wrote nothing before epoch 4 took over
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{1, 0}, EpochEntry{4, 5}));
  c.Assign(3, 20);  // an older epoch after a newer one replaces it
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{1, 0}, EpochEntry{3, 20}));
  c.Assign(-1, 30);  // undefined epochs (old message formats) are ignored
  EXPECT_EQ(c.latest(), (EpochEntry{3, 20}));
}

TEST(LeaderEpochCacheTest, TruncatingTheEndDropsEpochsThatStartedAfterIt) {
  LeaderEpochCache c = Cache({{1, 0}, {2, 10}, {3, 20}});
  c.TruncateFromEnd(20);
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{1, 0}, EpochEntry{2, 10}));
  c.TruncateFromEnd(11);
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{1, 0}, EpochEntry{2, 10}));
  c.TruncateFromEnd(0);
  EXPECT_TRUE(c.entries().empty());
  EXPECT_FALSE(c.latest().has_value());
}

TEST(LeaderEpochCacheTest, TruncatingTheStartMovesTheFirstEpochsStart) {
  LeaderEpochCache c = Cache({{1, 0}, {2, 10}, {3, 20}});
  c.TruncateFromStart(15);
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{2, 15}, EpochEntry{3, 20}));
  c.TruncateFromStart(20);
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{3, 20}));
  c.TruncateFromStart(5);  // already past: nothing changes
  EXPECT_THAT(c.entries(), ElementsAre(EpochEntry{3, 20}));
}

}  // namespace
}  // namespace exactly::broker
