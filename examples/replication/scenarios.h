// The five places where replication decides whether an acknowledged record
// survives (issue 19's seeds), each run on a fresh in-process cluster of
// bundled brokers with a real librdkafka producer and consumer, and counted:
// what was acknowledged, refused, lost and duplicated.
//
//   1. acks=1: followers fall behind, the leader acknowledges alone and dies,
//      an in-sync follower takes over: acknowledged records are lost.
//   2. acks=all, min.insync.replicas=2, idempotent: the same schedule, then
//      random leader kills while producing: nothing lost, nothing duplicated.
//   3. acks=all with min.insync.replicas=1 once the ISR shrank to the leader:
//      the leader alone acknowledges, then loses its page cache: lost. With
//      min.insync.replicas=2 the same writes are refused instead.
//   4. Unclean leader election: with it, an out-of-sync follower takes over
//      and the leader's acknowledged records are lost; without it the
//      partition waits offline for the leader, and nothing is lost.
//   5. Power loss (flush never): a single broker loses what it acknowledged;
//      RF=3 acks=all, one broker at a time losing its page cache, loses none.
#ifndef EXACTLY_EXAMPLES_REPLICATION_SCENARIOS_H_
#define EXACTLY_EXAMPLES_REPLICATION_SCENARIOS_H_

#include <functional>
#include <string>
#include <vector>

#include "examples/replication/record_ledger.h"

namespace exactly::examples {

struct ScenarioOptions {
  int records = 200;      // per phase
  int leader_kills = 50;  // scenario 2's random kills
  bool verbose = false;   // the brokers' logs
};

struct ScenarioRun {
  std::string scenario;  // "1. acks=1, RF=3"
  std::string variant;   // what differs between two runs of one scenario
  Counts counts;
  std::string error;  // set when the run could not be carried out
};

ScenarioRun AcksOneLeaderDies(const ScenarioOptions& o);
ScenarioRun AcksAllLeaderKills(const ScenarioOptions& o);
ScenarioRun IsrShrunkToLeader(const ScenarioOptions& o, int min_insync);
ScenarioRun UncleanElection(const ScenarioOptions& o, bool unclean);
ScenarioRun PowerLossSingleBroker(const ScenarioOptions& o);
ScenarioRun PowerLossReplicated(const ScenarioOptions& o);

}  // namespace exactly::examples

#endif  // EXACTLY_EXAMPLES_REPLICATION_SCENARIOS_H_
