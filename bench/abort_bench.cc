// What the defence against lost records after aborts (issue 16) costs: the
// SDK's TransactionalProducer starts a new producer epoch before the next
// transaction when an abort purged a record that may be on the broker. The
// baseline is librdkafka's own transactional API without it (which loses
// committed records in this very workload), the same loop in the same run.
//
// The workload is the issue's: transactions of 4 records, 2 to each of 2
// partitions, every second one aborted a few ms after its sends, on the
// bundled broker in this process; with 1 produce response in 4 dropped after
// the append (the epoch bumps happen), and with none (they do not).
//
//   abort_bench [--transactions 200] [--rounds 3] [--begin-samples 30]
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "eos/checker.h"
#include "eos/reader.h"
#include "eos/workload.h"
#include "exactly/broker/broker.h"
#include "exactly/exactly.h"

namespace {

using exactly::eos::WorkloadOptions;
using exactly::eos::WorkloadResult;

struct Measured {
  double transactions_per_second = 0;
  int64_t missing = 0;  // committed records a read_committed reader lacks
  int64_t epoch_bumps = 0;
};

Measured RunOnce(exactly::eos::Workload workload, const std::string& name,
                 int64_t transactions, bool drop_responses, int round) {
  exactly::broker::BrokerOptions options;
  auto broker = exactly::broker::Broker::Start(options);
  if (!broker.ok()) {
    std::fprintf(stderr, "broker: %s\n", broker.status().ToString().c_str());
    std::exit(1);
  }
  WorkloadOptions w;
  w.bootstrap_servers = (*broker)->bootstrap_servers();
  w.topic = absl::StrCat(name, "-", round);
  w.partitions = 2;
  w.writer = w.topic;
  w.seed = static_cast<uint64_t>(round + 1);
  w.transactions = transactions;
  w.duration = std::chrono::minutes(10);
  w.abort_probability = 0.5;
  w.min_records_per_transaction = w.max_records_per_transaction = 4;
  w.round_robin_partitions = true;
  if (!(*broker)->CreateTopic(w.topic, 2).ok()) std::exit(1);
  if (drop_responses) (*broker)->faults().DropProduceResponses(-1, 4);
  exactly::bench::Stopwatch clock;
  WorkloadResult result = workload(w);
  const double seconds = clock.Seconds();
  (*broker)->faults().Clear();
  Measured m;
  m.transactions_per_second =
      static_cast<double>(result.attempts.size()) / seconds;
  m.epoch_bumps = result.epoch_bumps;
  auto read = exactly::eos::ReadCommitted(w.bootstrap_servers, result.topics,
                                          std::chrono::seconds(30));
  if (read.ok())
    m.missing = exactly::eos::Check(result.attempts, *read).missing;
  return m;
}

// Median time of Begin() after an abort: with the abort's records possibly
// persisted (a dropped response, retry still queued: Begin starts a new
// epoch) or not (the same transaction without the drop). Alternates the two.
struct BeginCost {
  double bumping_ms = 0;
  double plain_ms = 0;
  uint64_t bumps = 0;
};

BeginCost MeasureBegin(int samples) {
  auto broker = exactly::broker::Broker::Start({});
  if (!broker.ok() || !(*broker)->CreateTopic("begin-cost", 1).ok()) {
    std::exit(1);
  }
  exactly::ProducerOptions o;
  o.bootstrap_servers = (*broker)->bootstrap_servers();
  o.transactional_id = "begin-cost";
  o.properties["retry.backoff.ms"] = "1000";  // the abort comes first
  o.properties["linger.ms"] = "0";
  auto created = exactly::TransactionalProducer::Create(o);
  if (!created.ok()) std::exit(1);
  exactly::TransactionalProducer& p = **created;
  auto drops = [&] {
    size_t n = 0;
    for (const std::string& line : (*broker)->faults().History()) {
      n += line.find("dropped its response") != std::string::npos;
    }
    return n;
  };
  std::vector<double> bumping, plain;
  for (int i = 0; i < 2 * samples; ++i) {
    const bool lose = i % 2 == 0;
    const size_t before = drops();
    if (!p.Begin().ok()) std::exit(1);
    if (lose) (*broker)->faults().DropProduceResponses(1);
    if (!p.Send({.topic = "begin-cost", .value = "v", .partition = 0}).ok()) {
      std::exit(1);
    }
    if (lose) {
      while (drops() == before) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    // Delivered (or its retry queued) by then.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!p.Abort().ok()) std::exit(1);
    exactly::bench::Stopwatch clock;
    if (!p.Begin().ok()) std::exit(1);
    (lose ? bumping : plain).push_back(clock.Seconds() * 1000);
    if (!p.Abort().ok()) std::exit(1);
  }
  BeginCost cost{exactly::bench::Median(bumping), exactly::bench::Median(plain),
                 p.stats().epoch_bumps};
  p.Close().IgnoreError();
  return cost;
}

}  // namespace

int main(int argc, char** argv) {
  exactly::bench::Args args(argc, argv);
  const int64_t transactions = args.Int("--transactions", 200);
  const int rounds = static_cast<int>(args.Int("--rounds", 3));
  std::printf(
      "abort_bench: %lld transactions of 4 records over 2 partitions, half "
      "aborted; %d rounds, SDK and raw librdkafka interleaved\n",
      static_cast<long long>(transactions), rounds);
  for (bool drop : {true, false}) {
    std::vector<double> sdk, raw;
    int64_t bumps = 0, sdk_missing = 0, raw_missing = 0;
    for (int r = 0; r < rounds; ++r) {
      Measured s =
          RunOnce(exactly::eos::RunVerbs, "sdk", transactions, drop, r);
      Measured b =
          RunOnce(exactly::eos::RunRawLibrdkafka, "raw", transactions, drop, r);
      sdk.push_back(s.transactions_per_second);
      raw.push_back(b.transactions_per_second);
      bumps += s.epoch_bumps;
      sdk_missing += s.missing;
      raw_missing += b.missing;
      std::printf(
          "  round %d%s: SDK %.1f txn/s (%lld epoch bumps), raw %.1f "
          "txn/s\n",
          r, drop ? " (1 response in 4 dropped)" : "",
          s.transactions_per_second, static_cast<long long>(s.epoch_bumps),
          b.transactions_per_second);
    }
    std::printf(
        "%s: SDK %.1f txn/s, raw librdkafka %.1f txn/s, ratio %.2fx (median of "
        "rounds); %lld epoch bumps in %lld SDK transactions; committed records "
        "missing: SDK %lld, raw %lld\n\n",
        drop ? "1 produce response in 4 dropped" : "no faults",
        exactly::bench::Median(sdk), exactly::bench::Median(raw),
        exactly::bench::MedianOfRatios(sdk, raw), static_cast<long long>(bumps),
        static_cast<long long>(transactions * rounds),
        static_cast<long long>(sdk_missing),
        static_cast<long long>(raw_missing));
  }
  const int samples = static_cast<int>(args.Int("--begin-samples", 30));
  BeginCost cost = MeasureBegin(samples);
  std::printf(
      "Begin() after an abort: %.2f ms when it starts a new epoch (the "
      "abort purged a possibly persisted record; %llu epoch bumps in %d), "
      "%.3f ms otherwise (medians)\n",
      cost.bumping_ms, static_cast<unsigned long long>(cost.bumps), samples,
      cost.plain_ms);
  return 0;
}
