// Where replication loses acknowledged records, and where it does not: the
// five scenarios of examples/replication/scenarios.h on an in-process cluster
// of three bundled brokers, printed as a table of counts. Exits non-zero if a
// scenario does not show what it is about (a loss where one is expected, none
// where the settings promise none).
//
//   replication_scenarios [--records N] [--leader-kills K] [--verbose 1]
#include <cstdio>
#include <string>
#include <vector>

#include "examples/example_support.h"
#include "examples/replication/scenarios.h"

namespace {

using exactly::examples::ScenarioRun;

// What each run must show.
enum class Expect { kLoss, kNoLossNoDuplicate, kRefusedNotLost };

bool Shows(const ScenarioRun& run, Expect expect) {
  if (!run.error.empty()) return false;
  const auto& c = run.counts;
  switch (expect) {
    case Expect::kLoss:
      return c.acknowledged > 0 && c.lost > 0;
    case Expect::kNoLossNoDuplicate:
      return c.acknowledged > 0 && c.lost == 0 && c.duplicated == 0;
    case Expect::kRefusedNotLost:
      return c.acknowledged == 0 && c.refused > 0 && c.lost == 0;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int records = 200, kills = 50, verbose = 0;
  if (!exactly::examples::ParseFlags(argc, argv,
                                     {{"--records", &records},
                                      {"--leader-kills", &kills},
                                      {"--verbose", &verbose}})) {
    std::fprintf(stderr,
                 "usage: replication_scenarios [--records N] "
                 "[--leader-kills K] [--verbose 1]\n");
    return 2;
  }
  namespace ex = exactly::examples;
  const ex::ScenarioOptions o{
      .records = records, .leader_kills = kills, .verbose = verbose != 0};
  std::vector<std::pair<ScenarioRun, Expect>> runs;
  runs.emplace_back(ex::AcksOneLeaderDies(o), Expect::kLoss);
  runs.emplace_back(ex::AcksAllLeaderKills(o), Expect::kNoLossNoDuplicate);
  runs.emplace_back(ex::IsrShrunkToLeader(o, 1), Expect::kLoss);
  runs.emplace_back(ex::IsrShrunkToLeader(o, 2), Expect::kRefusedNotLost);
  runs.emplace_back(ex::UncleanElection(o, true), Expect::kLoss);
  runs.emplace_back(ex::UncleanElection(o, false), Expect::kNoLossNoDuplicate);
  runs.emplace_back(ex::PowerLossSingleBroker(o), Expect::kLoss);
  runs.emplace_back(ex::PowerLossReplicated(o), Expect::kNoLossNoDuplicate);

  std::printf(
      "\n| scenario | variant | acknowledged | refused | lost | "
      "duplicated | shows |\n|---|---|---|---|---|---|---|\n");
  bool all = true;
  for (const auto& [run, expect] : runs) {
    const bool shows = Shows(run, expect);
    all = all && shows;
    if (!run.error.empty()) {
      std::printf("| %s | %s | - | - | - | - | NO: %s |\n",
                  run.scenario.c_str(), run.variant.c_str(), run.error.c_str());
      continue;
    }
    std::printf(
        "| %s | %s | %lld | %lld | %lld | %lld | %s |\n", run.scenario.c_str(),
        run.variant.c_str(), static_cast<long long>(run.counts.acknowledged),
        static_cast<long long>(run.counts.refused),
        static_cast<long long>(run.counts.lost),
        static_cast<long long>(run.counts.duplicated), shows ? "yes" : "NO");
  }
  return all ? 0 : 1;
}
