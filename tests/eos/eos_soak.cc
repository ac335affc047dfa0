// exactly-eos-soak: the checker for as long as one likes. Each round starts
// a fresh bundled broker, runs one workload under a fault schedule drawn
// from the round's seed, reads everything back with an independent reader,
// and prints the check. Exits non-zero on the first violation (the seed in
// its output reproduces the schedule, not the timing).
//
//   exactly-eos-soak --seconds 600 --workload all --seed 1
#include <stdio.h>

#include <chrono>
#include <map>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "eos/checker.h"
#include "eos/nemesis.h"
#include "eos/reader.h"
#include "eos/workload.h"
#include "exactly/broker/broker.h"
#include "support/temp_dir.h"

ABSL_FLAG(int, seconds, 300, "stop starting rounds after this long");
ABSL_FLAG(int, round_seconds, 15, "how long each workload runs");
ABSL_FLAG(
    std::string, workload, "all",
    "transact, verbs, processor, spool, or all (in turn), comma-separated");
ABSL_FLAG(uint64_t, seed, 1, "seed of the first round; each round adds 1");
ABSL_FLAG(bool, restarts, true,
          "include crash, power-loss and held-marker restarts (every other "
          "round, with a data dir)");

namespace exactly::eos {
namespace {

using Clock = std::chrono::steady_clock;

int Main() {
  const std::map<std::string, Workload> known = {{"transact", RunTransact},
                                                 {"verbs", RunVerbs},
                                                 {"processor", RunProcessor},
                                                 {"spool", RunSpool}};
  std::vector<std::string> names;
  for (absl::string_view n :
       absl::StrSplit(absl::GetFlag(FLAGS_workload), ',')) {
    if (n == "all") {
      for (const auto& [k, v] : known) names.push_back(k);
    } else if (known.contains(std::string(n))) {
      names.emplace_back(n);
    } else {
      fprintf(stderr, "unknown workload %s\n", std::string(n).c_str());
      return 2;
    }
  }
  const auto end =
      Clock::now() + std::chrono::seconds(absl::GetFlag(FLAGS_seconds));
  int64_t rounds = 0;
  for (uint64_t seed = absl::GetFlag(FLAGS_seed); Clock::now() < end;
       ++seed, ++rounds) {
    const std::string& name = names[rounds % names.size()];
    const bool restarts = absl::GetFlag(FLAGS_restarts) && seed % 2 == 0;
    testing::TempDir dir;
    broker::BrokerOptions options;
    options.default_partitions = 3;
    options.transaction_abort_check_interval_ms = 200;
    if (restarts) {
      options.data_dir = dir.Sub("broker");
      options.flush.every_messages = 1;
    }
    auto broker = broker::Broker::Start(options);
    if (!broker.ok()) {
      fprintf(stderr, "broker: %s\n", broker.status().ToString().c_str());
      return 1;
    }
    WorkloadOptions w;
    w.bootstrap_servers = (*broker)->bootstrap_servers();
    w.topic = absl::StrCat("soak-", seed, "-out");
    w.input_topic = absl::StrCat("soak-", seed, "-in");
    w.partitions = 3;
    w.writer = absl::StrCat("soak-", seed);
    w.seed = seed;
    w.duration = std::chrono::seconds(absl::GetFlag(FLAGS_round_seconds));
    w.transactions = 1'000'000;  // the round's duration ends it
    w.spool_dir = dir.Sub("spool");
    (*broker)->CreateTopic(w.topic, 3).IgnoreError();
    (*broker)->CreateTopic(w.input_topic, 3).IgnoreError();

    Nemesis nemesis(
        broker->get(),
        {.seed = seed, .faults = restarts ? AllFaults() : InMemoryFaults()});
    w.on_ready = [&nemesis] { nemesis.Start(); };
    WorkloadResult result = known.at(name)(w);
    nemesis.Stop();
    absl::StatusOr<ReadResult> read =
        ReadCommitted((*broker)->bootstrap_servers(), result.topics,
                      std::chrono::seconds(40));
    if (!read.ok()) {
      fprintf(stderr, "read: %s\n", read.status().ToString().c_str());
      return 1;
    }
    CheckReport report = Check(result.attempts, *read);
    printf("round %lld: %s, seed %llu%s, %zu faults, %lld epoch bumps: %s\n",
           static_cast<long long>(rounds), name.c_str(),
           static_cast<unsigned long long>(seed), restarts ? " (restarts)" : "",
           nemesis.log().size(), static_cast<long long>(result.epoch_bumps),
           report.Summary().c_str());
    fflush(stdout);
    for (const std::string& e : result.errors)
      printf("  error: %s\n", e.c_str());
    for (const std::string& e : nemesis.errors())
      printf("  nemesis error: %s\n", e.c_str());
    if (!report.ok() || !result.errors.empty() || !nemesis.errors().empty()) {
      return 1;
    }
  }
  printf("%lld rounds, no violation\n", static_cast<long long>(rounds));
  return 0;
}

}  // namespace
}  // namespace exactly::eos

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return exactly::eos::Main();
}
