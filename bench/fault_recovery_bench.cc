// How long lost produce responses stall the SDK (issue 23, "faults cost
// seconds, not tens of seconds"). The in-process bundled broker appends a
// produce request and drops its response, two ways:
//   - "closed": 1 request in 10, closing the connection, so the client must
//     reconnect and retry a batch the broker already has (about N / B / 10
//     connections die, young);
//   - "kept open": the next D (default 2) requests, 1 in 10, the connection
//     staying open, so the client hears nothing until its own request
//     timeout (librdkafka: socket.timeout.ms, 60 s by default), then drops
//     the connection (socket.max.fails=1), reconnects and retries.
// Each workload drains N records (default 300) in requests of B (default 10;
// librdkafka sends one request per partition):
//   - exactly::Producer (idempotent): Send B records, Flush, N / B times;
//   - exactly::TransactionalProducer: N / B transactions of B records;
//   - exactly::SpooledProducer (transactional): SendBatch of N records, then
//     Flush, with max_batch_records = B (N / B transactions).
// Each is run twice in the same round, on a fresh broker each time:
//   - "librdkafka defaults": the SDK with every property it sets for fault
//     recovery set back to librdkafka's own default (read from
//     rd_kafka_conf_new, printed);
//   - "SDK defaults": the SDK as it is.
// Printed: seconds from the first Send to the last Flush/commit, the
// responses the broker dropped, the seconds per drop, and the ratio librdkafka
// defaults / SDK defaults (the median of the per-round ratios). For context,
// the same workload without faults (SDK defaults, or --try) once per round.
//
//   fault_recovery_bench [--records N] [--batch B] [--one-in K] [--rounds R]
//                        [--open-drops D] [--faults closed,open]
//                        [--workloads producer,txn,spool]
//                        [--try "name=value,name=value"] 2>/dev/null
//
// --try adds properties to the "SDK defaults" run (to measure a candidate
// default). About 9 minutes with the defaults, nearly all of it the
// librdkafka-defaults runs: "closed" about 2 minutes for the three workloads
// (their back-off grows towards 10 s; with --records 1000 each of those runs
// takes about 4.5 minutes), "kept open" about 60 s per dropped response;
// 2>/dev/null hides the broker's and librdkafka's logs.
//
// Targets (issue 23): with the SDK's defaults, each workload drains at least
// 10x faster than with librdkafka's when connections close, and at least 4x
// when responses are lost on open connections (the request timeout: 60 s
// against the SDK's 10 s, plus the time the workload takes anyway).
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/faults.h"
#include "exactly/options.h"
#include "exactly/producer.h"
#include "exactly/spool.h"
#include "exactly/transactional_producer.h"

namespace exactly::bench {
namespace {

constexpr int kPartitions = 3;
constexpr size_t kValueBytes = 100;
constexpr int16_t kProduceApiKey = 0;

// The librdkafka properties the SDK sets for recovering from dropped
// connections and timeouts (sdk/src/client/options.cc).
constexpr const char* kRecoveryProperties[] = {
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "socket.timeout.ms",
};

using Properties = std::map<std::string, std::string>;

// librdkafka's own value of each recovery property.
Properties LibrdkafkaDefaults() {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  Properties out;
  for (const char* name : kRecoveryProperties) {
    char value[256];
    size_t size = sizeof value;
    if (rd_kafka_conf_get(conf, name, value, &size) != RD_KAFKA_CONF_OK) {
      Die(std::string("unknown property ") + name);
    }
    out[name] = value;
  }
  rd_kafka_conf_destroy(conf);
  return out;
}

// What the SDK sets for each recovery property, as a client would get it.
Properties SdkValues() {
  ProducerOptions o;
  o.bootstrap_servers = "localhost:9092";
  auto p = LibrdkafkaProperties(o);
  if (!p.ok())
    Die("LibrdkafkaProperties: " + std::string(p.status().message()));
  Properties out;
  for (const char* name : kRecoveryProperties) {
    auto it = p->find(name);
    out[name] = it == p->end() ? "(librdkafka's)" : it->second;
  }
  return out;
}

// "a=1,b=2" -> {a: 1, b: 2}.
Properties ParseProperties(const std::string& text) {
  Properties out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) Die("--try: expected name=value: " + item);
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

std::string Join(const Properties& p) {
  std::string out;
  for (const auto& [k, v] : p) out += (out.empty() ? "" : ", ") + k + "=" + v;
  return out.empty() ? "(none)" : out;
}

struct Params {
  int64_t records = 300;
  int batch = 10;
  int one_in = 10;
  int open_drops = 2;
};

// How the broker loses produce responses: none, closing the connection (1 in
// one_in, until the end), or keeping it open (the next `count`, 1 in one_in).
enum class Loss { kNone, kClosed, kKeptOpen };
struct Fault {
  Loss loss = Loss::kNone;
  int one_in = 1;
  int count = -1;
};

const char* LossName(Loss loss) {
  switch (loss) {
    case Loss::kNone:
      return "no faults";
    case Loss::kClosed:
      return "closed";
    case Loss::kKeptOpen:
      return "kept open";
  }
  return "?";
}

struct Run {
  double seconds = 0;
  int64_t drops = 0;
};

// A fresh in-process broker with the topic, losing produce responses to it as
// `fault` says from when Arm() is called.
class FlakyBroker {
 public:
  explicit FlakyBroker(const std::string& topic) : topic_(topic) {
    auto started = broker::Broker::Start({});
    if (!started.ok()) Die("cannot start the bundled broker");
    broker_ = std::move(*started);
    if (!broker_->CreateTopic(topic, kPartitions).ok()) Die("create topic");
  }
  std::string bootstrap() const { return broker_->bootstrap_servers(); }
  void Arm(const Fault& fault) {
    drops_before_ = Injected();
    broker::FaultMatch match;
    match.api_key = kProduceApiKey;
    match.topic = topic_;
    if (fault.loss == Loss::kClosed) {
      broker_->faults().DropProduceResponses(fault.count, fault.one_in, match);
    } else if (fault.loss == Loss::kKeptOpen) {
      broker_->faults().DropProduceResponsesKeepOpen(fault.count, fault.one_in,
                                                     match);
    }
  }
  int64_t Drops() const { return Injected() - drops_before_; }

 private:
  int64_t Injected() const {
    int64_t n = 0;
    for (const auto& [kind, count] : broker_->faults().InjectedCounts()) {
      if (kind.rfind("dropped_produce_response", 0) == 0) n += count;
    }
    return n;
  }

  std::string topic_;
  std::unique_ptr<broker::Broker> broker_;
  int64_t drops_before_ = 0;
};

ProducerOptions Options(const std::string& bootstrap, const Properties& extra) {
  ProducerOptions o;
  o.bootstrap_servers = bootstrap;
  o.properties = extra;
  o.properties["linger.ms"] = "5";
  return o;
}

std::vector<Record> Batch(const std::string& topic, const std::string& value,
                          int64_t first, int64_t count) {
  std::vector<Record> out;
  for (int64_t i = first; i < first + count; ++i) {
    out.push_back({.topic = topic,
                   .value = value,
                   .partition = static_cast<int32_t>(i % kPartitions)});
  }
  return out;
}

Run ProducerRun(const Params& p, const Properties& extra, const Fault& fault,
                int64_t id) {
  const std::string topic = "producer-" + std::to_string(id);
  FlakyBroker broker(topic);
  auto producer = Producer::Create(Options(broker.bootstrap(), extra));
  if (!producer.ok())
    Die("Producer::Create: " + std::string(producer.status().message()));
  Producer& out = **producer;
  const std::string value(kValueBytes, 'p');
  // Connecting and learning metadata happen before the clock starts.
  if (!out.Send({.topic = topic, .value = value, .partition = 0}).ok() ||
      !out.Flush(std::chrono::seconds(30)).ok()) {
    Die("producer warm-up");
  }
  broker.Arm(fault);
  Stopwatch watch;
  for (int64_t first = 0; first < p.records; first += p.batch) {
    for (const Record& r : Batch(topic, value, first, p.batch)) {
      if (absl::Status s = out.Send(r); !s.ok())
        Die("Send: " + std::string(s.message()));
    }
    if (absl::Status s = out.Flush(std::chrono::seconds(300)); !s.ok())
      Die("Flush: " + std::string(s.message()));
  }
  Run run{watch.Seconds(), broker.Drops()};
  if (out.stats().delivered != static_cast<uint64_t>(p.records + 1))
    Die("producer: records missing");
  return run;
}

Run TransactionalRun(const Params& p, const Properties& extra,
                     const Fault& fault, int64_t id) {
  const std::string topic = "txn-" + std::to_string(id);
  FlakyBroker broker(topic);
  ProducerOptions o = Options(broker.bootstrap(), extra);
  o.transactional_id = "fault-recovery-txn-" + std::to_string(id);
  auto producer = TransactionalProducer::Create(o);
  if (!producer.ok())
    Die("TransactionalProducer::Create: " +
        std::string(producer.status().message()));
  TransactionalProducer& out = **producer;
  const std::string value(kValueBytes, 't');
  auto transact = [&](int64_t first, int64_t count) {
    absl::Status s = out.Transact([&](Transaction& txn) {
      for (const Record& r : Batch(topic, value, first, count)) {
        if (absl::Status sent = txn.Send(r); !sent.ok()) return sent;
      }
      return absl::OkStatus();
    });
    if (!s.ok()) Die("Transact: " + std::string(s.message()));
  };
  transact(0, 1);  // warm-up: connections, metadata, the coordinator
  const uint64_t committed_before = out.stats().committed;
  broker.Arm(fault);
  Stopwatch watch;
  for (int64_t first = 0; first < p.records; first += p.batch) {
    transact(first, p.batch);
  }
  Run run{watch.Seconds(), broker.Drops()};
  if (out.stats().committed - committed_before !=
      static_cast<uint64_t>((p.records + p.batch - 1) / p.batch))
    Die("transactional: transactions missing");
  return run;
}

Run SpoolRun(const Params& p, const Properties& extra, const Fault& fault,
             int64_t id) {
  const std::string topic = "spool-" + std::to_string(id);
  FlakyBroker broker(topic);
  TempDir dir;
  SpoolOptions o;
  o.dir = dir.path() + "/spool";
  o.producer = Options(broker.bootstrap(), extra);
  o.producer.transactional_id = "fault-recovery-spool-" + std::to_string(id);
  o.max_batch_records = static_cast<size_t>(p.batch);
  auto spool = SpooledProducer::Create(o);
  if (!spool.ok())
    Die("SpooledProducer::Create: " + std::string(spool.status().message()));
  SpooledProducer& out = **spool;
  const std::string value(kValueBytes, 's');
  // Warm-up: recovery (init_transactions, the probe) and metadata.
  if (!out.Send({.topic = topic, .value = value, .partition = 0}).ok() ||
      !out.Flush(std::chrono::seconds(60)).ok()) {
    Die("spool warm-up");
  }
  const uint64_t committed_before = out.metrics().committed;
  broker.Arm(fault);
  Stopwatch watch;
  const std::vector<Record> records = Batch(topic, value, 0, p.records);
  if (absl::Status s = out.SendBatch(records); !s.ok())
    Die("SendBatch: " + std::string(s.message()));
  if (absl::Status s = out.Flush(std::chrono::seconds(300)); !s.ok())
    Die("spool Flush: " + std::string(s.message()));
  Run run{watch.Seconds(), broker.Drops()};
  if (out.metrics().committed - committed_before !=
      static_cast<uint64_t>(p.records))
    Die("spool: records missing");
  out.Close().IgnoreError();
  return run;
}

struct Workload {
  std::string name;
  Loss loss;
  Run (*run)(const Params&, const Properties&, const Fault&, int64_t);
  std::vector<double> librdkafka, sdk, clean;
  std::vector<int64_t> librdkafka_drops, sdk_drops;
};

// Seconds per dropped response over all rounds.
double PerDrop(const std::vector<double>& seconds,
               const std::vector<int64_t>& drops) {
  double s = 0, d = 0;
  for (size_t i = 0; i < seconds.size(); ++i) {
    s += seconds[i];
    d += static_cast<double>(drops[i]);
  }
  return d > 0 ? s / d : 0;
}

}  // namespace
}  // namespace exactly::bench

int main(int argc, char** argv) {
  using namespace exactly::bench;
  Args args(argc, argv);
  Params p;
  p.records = args.Int("--records", p.records);
  p.batch = static_cast<int>(args.Int("--batch", p.batch));
  p.one_in = static_cast<int>(args.Int("--one-in", p.one_in));
  p.open_drops = static_cast<int>(args.Int("--open-drops", p.open_drops));
  const int rounds = static_cast<int>(args.Int("--rounds", 1));
  const std::string wanted = args.Str("--workloads", "producer,txn,spool");
  const std::string faults = args.Str("--faults", "closed,open");
  const Properties tried = ParseProperties(args.Str("--try", ""));
  if (p.records < 1 || p.batch < 1 || p.one_in < 1 || rounds < 1 ||
      p.open_drops < 1)
    Die("--records, --batch, --one-in, --open-drops and --rounds must be "
        "positive");

  const Properties librdkafka = LibrdkafkaDefaults();
  std::printf(
      "fault_recovery_bench: librdkafka %s, bundled broker in memory "
      "(in-process), %lld records of %zu bytes, %d per request; produce "
      "responses dropped: \"closed\" 1 in %d (the connection closed), "
      "\"kept open\" the next %d, 1 in %d (the connection kept open); %d "
      "round(s)\n",
      rd_kafka_version_str(), static_cast<long long>(p.records), kValueBytes,
      p.batch, p.one_in, p.open_drops, p.one_in, rounds);
  std::printf("  librdkafka defaults: %s\n", Join(librdkafka).c_str());
  std::printf("  SDK defaults:        %s%s%s\n\n", Join(SdkValues()).c_str(),
              tried.empty() ? "" : "; tried on top: ",
              tried.empty() ? "" : Join(tried).c_str());
  std::fflush(stdout);

  std::vector<Loss> losses;
  if (faults.find("closed") != std::string::npos)
    losses.push_back(Loss::kClosed);
  if (faults.find("open") != std::string::npos)
    losses.push_back(Loss::kKeptOpen);
  std::vector<Workload> workloads;
  for (Loss loss : losses) {
    if (wanted.find("producer") != std::string::npos)
      workloads.push_back({"Producer (idempotent)", loss, ProducerRun});
    if (wanted.find("txn") != std::string::npos)
      workloads.push_back({"TransactionalProducer", loss, TransactionalRun});
    if (wanted.find("spool") != std::string::npos)
      workloads.push_back({"SpooledProducer (transactional)", loss, SpoolRun});
  }

  int64_t id = 0;
  for (int r = 0; r < rounds; ++r) {
    for (Workload& w : workloads) {
      Fault fault{w.loss, p.one_in,
                  w.loss == Loss::kKeptOpen ? p.open_drops : -1};
      // Alternate which configuration goes first.
      for (int k = 0; k < 2; ++k) {
        if ((k + r) % 2 == 0) {
          Run run = w.run(p, librdkafka, fault, ++id);
          w.librdkafka.push_back(run.seconds);
          w.librdkafka_drops.push_back(run.drops);
        } else {
          Run run = w.run(p, tried, fault, ++id);
          w.sdk.push_back(run.seconds);
          w.sdk_drops.push_back(run.drops);
        }
      }
      w.clean.push_back(w.run(p, tried, Fault{}, ++id).seconds);
      std::printf(
          "round %d, %-32s %-9s librdkafka defaults %7.2f s (%lld drops), "
          "SDK defaults %6.2f s (%lld drops), %.1fx; no faults %.3f s\n",
          r + 1, w.name.c_str(), LossName(w.loss), w.librdkafka.back(),
          static_cast<long long>(w.librdkafka_drops.back()), w.sdk.back(),
          static_cast<long long>(w.sdk_drops.back()),
          w.librdkafka.back() / w.sdk.back(), w.clean.back());
      std::fflush(stdout);
    }
  }

  std::printf("\n%-34s %-9s %14s %14s %9s %10s  %s\n", "drain time (median)",
              "responses", "librdkafka's", "SDK's", "ratio", "no faults",
              "s per drop: librdkafka's / SDK's");
  Verdict v;
  for (const Workload& w : workloads) {
    const double ratio = MedianOfRatios(w.librdkafka, w.sdk);
    std::printf("%-34s %-9s %12.2f s %12.2f s %8.1fx %8.3f s  %.2f / %.2f\n",
                w.name.c_str(), LossName(w.loss), Median(w.librdkafka),
                Median(w.sdk), ratio, Median(w.clean),
                PerDrop(w.librdkafka, w.librdkafka_drops),
                PerDrop(w.sdk, w.sdk_drops));
    const bool open = w.loss == Loss::kKeptOpen;
    v.Check(w.name + ", " + LossName(w.loss) +
                ": SDK >= " + (open ? "4" : "10") + "x librdkafka's",
            ratio, open ? 4.0 : 10.0);
  }
  return v.Print();
}
