// Issue 19's five scenarios (examples/replication/scenarios.h), each on a
// fresh in-process cluster of three brokers, with real librdkafka clients,
// asserting what it is about: where replication loses acknowledged records
// (acks=1, an ISR of one with min.insync.replicas=1, unclean election, a
// single broker's power loss) and where it must not (acks=all with
// min.insync.replicas=2 through leader kills, RF=3 through power losses).
#include "examples/replication/scenarios.h"
#include "gtest/gtest.h"

namespace exactly::examples {
namespace {

ScenarioOptions Options() {
  ScenarioOptions o;
  o.records = 200;
  o.leader_kills = 50;
  o.verbose = getenv("SCENARIO_VERBOSE") != nullptr;
  return o;
}

TEST(ReplicationScenariosTest, AcksOneLosesWhatTheDeadLeaderAloneHad) {
  ScenarioRun run = AcksOneLeaderDies(Options());
  ASSERT_EQ(run.error, "");
  EXPECT_EQ(run.counts.acknowledged, 400);
  // The records acknowledged while the followers were paused are gone.
  EXPECT_EQ(run.counts.lost, 200);
}

TEST(ReplicationScenariosTest, AcksAllLosesNothingThroughLeaderKills) {
  ScenarioRun run = AcksAllLeaderKills(Options());
  ASSERT_EQ(run.error, "");
  EXPECT_GE(run.counts.acknowledged, 200);
  EXPECT_EQ(run.counts.lost, 0);
  EXPECT_EQ(run.counts.duplicated, 0);
}

TEST(ReplicationScenariosTest, AnIsrOfOneWithMinInsyncOneLoses) {
  ScenarioRun run = IsrShrunkToLeader(Options(), 1);
  ASSERT_EQ(run.error, "");
  EXPECT_EQ(run.counts.acknowledged, 200);
  EXPECT_GT(run.counts.lost, 0);
}

TEST(ReplicationScenariosTest, MinInsyncTwoRefusesWhatItCouldNotKeep) {
  ScenarioRun run = IsrShrunkToLeader(Options(), 2);
  ASSERT_EQ(run.error, "");
  EXPECT_EQ(run.counts.acknowledged, 0);
  EXPECT_EQ(run.counts.refused, 200);
  EXPECT_EQ(run.counts.lost, 0);
}

TEST(ReplicationScenariosTest, UncleanElectionLoses) {
  ScenarioRun run = UncleanElection(Options(), true);
  ASSERT_EQ(run.error, "");
  EXPECT_EQ(run.counts.acknowledged, 200);
  EXPECT_EQ(run.counts.lost, 200);
}

TEST(ReplicationScenariosTest, WithoutUncleanElectionThePartitionWaits) {
  ScenarioRun run = UncleanElection(Options(), false);
  ASSERT_EQ(run.error, "") << "an out-of-sync replica must not lead";
  EXPECT_EQ(run.counts.acknowledged, 200);
  EXPECT_EQ(run.counts.lost, 0);
  EXPECT_EQ(run.counts.duplicated, 0);
}

TEST(ReplicationScenariosTest, ASingleBrokersPowerLossLoses) {
  ScenarioRun run = PowerLossSingleBroker(Options());
  ASSERT_EQ(run.error, "");
  EXPECT_EQ(run.counts.acknowledged, 200);
  EXPECT_GT(run.counts.lost, 0);
}

TEST(ReplicationScenariosTest, ReplicasSurviveOnePowerLossAtATime) {
  ScenarioRun run = PowerLossReplicated(Options());
  ASSERT_EQ(run.error, "");
  EXPECT_EQ(run.counts.acknowledged, 200);
  EXPECT_EQ(run.counts.lost, 0);
  EXPECT_EQ(run.counts.duplicated, 0);
}

}  // namespace
}  // namespace exactly::examples
