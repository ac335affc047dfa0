// What the CRC-32C instruction is worth (common/crc32c): the table
// implementation ("before": software, forced with
// ForceImplementationForBenchmark) against the one Extend() picks by CPU
// ("after": SSE4.2, three streams from 768 B), in the same run, rounds
// alternating (this machine is shared and noisy).
//
//   crc_bench [--rounds R=5] [--millis M=200] [--spool-rounds S=7]
//             [--spool-records N=500000] [--dir DIR]
//             2>&1 | grep -v exactly-broker
//
// 1. Raw CRC throughput, GB/s, at 100 B, 1 KiB, 16 KiB and 1 MiB: the table,
//    the instruction over one stream, and Extend() (three streams from
//    768 B); each call extends the previous call's CRC.
// 2. The broker's produce path: CheckProduceBatches() (protocol/
//    record_batch.h), what the broker runs on every produced partition's
//    records before an append (CRC-32C, then every record's framing), on
//    uncompressed idempotent v2 batches of 100 records x 100 B (11 KB) and of
//    16 records x 1 KiB (16.6 KB): batches/s, one thread.
// 3. The spool: one SpooledProducer (exactly-once, SyncPolicy::kAlways)
//    against an in-process bundled broker; one thread calls SendAsync with 100
//    records of 100 B, N records in all, timed until every call is durable
//    (the drainer runs meanwhile and checks each record's CRC as it reads it,
//    and the broker checks each batch's); then Flush, so that each run starts
//    with an empty spool. Records/s until durable; the sending thread's CPU
//    time per record (SendAsync checks and encodes each record, CRC
//    included, on the caller's thread: the steadiest figure on a busy
//    machine); and the process's CPU time per record until drained (Flush
//    returned: the sender, the spool's threads, librdkafka and the broker,
//    all of the records' work, but also whatever runs on a timer). One
//    untimed run first; S rounds.
// Runs 1 and 2 last M ms each. Each figure is the median of the rounds; each
// ratio is the median of the per-round ratios after/before. No target: the
// ratios are printed.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/spool_runs.h"
#include "crc32c/crc32c.h"
#include "exactly/broker/broker.h"
#include "exactly/spool.h"
#include "protocol/record_batch.h"

namespace exactly::bench {
namespace {

using crc32c::Implementation;

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  std::string data(n, '\0');
  for (char& c : data) c = static_cast<char>(random());
  return data;
}

// Prints "name  median unit  rounds: ...", with `decimals` decimals.
void PrintRow(const char* name, const char* unit, const std::vector<double>& v,
              int decimals = 0) {
  std::printf("  %-38s %12.*f %-10s rounds:", name, decimals, Median(v), unit);
  for (double x : v) std::printf(" %.*f", decimals, x);
  std::printf("\n");
}

void PrintRatio(const char* what, const std::vector<double>& after,
                const std::vector<double>& before) {
  std::printf("  %-38s %11.2fx   (median of the per-round ratios)\n", what,
              MedianOfRatios(after, before));
}

// --- 1. Raw throughput
// -------------------------------------------------------------

using ExtendFn = uint32_t (*)(uint32_t, const void*, size_t);

uint32_t ExtendAuto(uint32_t crc, const void* data, size_t n) {
  return crc32c::Extend(crc, data, n);
}

uint32_t g_sink = 0;  // keeps the CRCs computed

// GB/s of `fn` over `size` bytes, for about `seconds`.
double Throughput(ExtendFn fn, const std::string& data, size_t size,
                  double seconds) {
  const size_t per_check = std::max<size_t>(1, (size_t{4} << 20) / size);
  uint32_t crc = 0;
  uint64_t calls = 0;
  Stopwatch watch;
  double elapsed = 0;
  do {
    for (size_t i = 0; i < per_check; ++i) crc = fn(crc, data.data(), size);
    calls += per_check;
    elapsed = watch.Seconds();
  } while (elapsed < seconds);
  g_sink ^= crc;
  return static_cast<double>(calls) * static_cast<double>(size) / elapsed / 1e9;
}

void RawThroughput(int rounds, double seconds) {
  std::printf(
      "1. CRC-32C throughput, GB/s (one thread; median of %d rounds)\n"
      "  %-9s %10s %10s %10s %14s %14s\n",
      rounds, "size", "table", "1 stream", "Extend()", "Extend/table",
      "Extend/1 stream");
  const std::string data = RandomBytes(size_t{1} << 20, 1);
  for (size_t size :
       {size_t{100}, size_t{1024}, size_t{16} << 10, size_t{1} << 20}) {
    std::vector<double> table, one, best;
    for (int r = 0; r < rounds; ++r) {
      // Rotate the order from round to round.
      for (int k = 0; k < 3; ++k) {
        switch ((k + r) % 3) {
          case 0:
            table.push_back(
                Throughput(&crc32c::ExtendPortable, data, size, seconds));
            break;
          case 1:
            one.push_back(
                Throughput(&crc32c::ExtendHardware1, data, size, seconds));
            break;
          case 2:
            best.push_back(Throughput(&ExtendAuto, data, size, seconds));
            break;
        }
      }
    }
    char label[32];
    if (size >= (size_t{1} << 20)) {
      std::snprintf(label, sizeof label, "%zu MiB", size >> 20);
    } else if (size >= 1024) {
      std::snprintf(label, sizeof label, "%zu KiB", size >> 10);
    } else {
      std::snprintf(label, sizeof label, "%zu B", size);
    }
    std::printf("  %-9s %10.2f %10.2f %10.2f %13.2fx %13.2fx\n", label,
                Median(table), Median(one), Median(best),
                MedianOfRatios(best, table), MedianOfRatios(best, one));
  }
}

// --- 2. The broker's produce path
// --------------------------------------------------

std::string ProducedBatch(int records, size_t value_bytes) {
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = 1700000000000;
  spec.producer_id = 1000;  // idempotent, as librdkafka sends
  spec.producer_epoch = 0;
  spec.base_sequence = 0;
  std::vector<protocol::RecordSpec> specs;
  for (int i = 0; i < records; ++i) {
    protocol::RecordSpec r;
    r.value = RandomBytes(value_bytes, static_cast<uint32_t>(i));
    r.timestamp_delta = i;
    specs.push_back(std::move(r));
  }
  absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(spec, specs);
  if (!batch.ok()) Die("BuildRecordBatch: " + batch.status().ToString());
  return *batch;
}

// Batches/s of CheckProduceBatches over `batch`, for about `seconds`.
double CheckRate(const std::string& batch, double seconds) {
  uint64_t checked = 0;
  Stopwatch watch;
  double elapsed = 0;
  do {
    for (int i = 0; i < 256; ++i) {
      protocol::BatchCheck check = protocol::CheckProduceBatches(batch);
      if (!check.ok()) Die("CheckProduceBatches: " + check.message);
    }
    checked += 256;
    elapsed = watch.Seconds();
  } while (elapsed < seconds);
  return static_cast<double>(checked) / elapsed;
}

void BrokerProducePath(int rounds, double seconds) {
  std::printf(
      "\n2. broker produce path: CheckProduceBatches per produced batch "
      "(CRC-32C + record framing), batches/s, one thread\n");
  struct Shape {
    const char* name;
    int records;
    size_t value_bytes;
  };
  for (const Shape& shape :
       {Shape{"100 x 100 B", 100, 100}, Shape{"16 x 1 KiB", 16, 1024}}) {
    const std::string batch = ProducedBatch(shape.records, shape.value_bytes);
    std::vector<double> before, after;
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < 2; ++k) {
        const bool software = (k + r) % 2 == 0;
        crc32c::ForceImplementationForBenchmark(
            software ? Implementation::kPortable : Implementation::kAuto);
        (software ? before : after).push_back(CheckRate(batch, seconds));
      }
    }
    crc32c::ForceImplementationForBenchmark(Implementation::kAuto);
    char name[96];
    std::printf("  batch of %s (%zu bytes):\n", shape.name, batch.size());
    std::snprintf(name, sizeof name, "before (table)");
    PrintRow(name, "batches/s", before);
    std::snprintf(name, sizeof name, "after (Extend(): %s)",
                  crc32c::UsesHardware() ? "SSE4.2" : "table");
    PrintRow(name, "batches/s", after);
    PrintRatio("after / before", after, before);
  }
}

// --- 3. The spool's SendAsync
// ------------------------------------------------------

constexpr char kTopic[] = "crc";
constexpr int kPartitions = 3;
constexpr int kRecordsPerCall = 100;
constexpr size_t kValueBytes = 100;

std::unique_ptr<SpooledProducer> OpenSpool(const std::string& dir,
                                           const std::string& bootstrap) {
  SpoolOptions options;
  options.dir = dir;
  options.producer.bootstrap_servers = bootstrap;
  options.producer.transactional_id = "crc-bench";
  options.sync = SyncPolicy::kAlways;
  auto spool = SpooledProducer::Create(options);
  if (!spool.ok()) Die("SpooledProducer::Create: " + spool.status().ToString());
  // Recovery and the topic's metadata, untimed.
  const std::string value(kValueBytes, 'w');
  if (absl::Status s =
          (*spool)->Send({.topic = kTopic, .value = value, .partition = 0});
      !s.ok()) {
    Die("warm-up Send: " + s.ToString());
  }
  if (absl::Status s = (*spool)->Flush(std::chrono::seconds(60)); !s.ok()) {
    Die("warm-up Flush: " + s.ToString());
  }
  return std::move(*spool);
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct SpoolRun {
  double records_per_s = 0;         // until durable
  double sender_us_per_record = 0;  // the SendAsync calls, this thread
  double cpu_us_per_record = 0;     // the process, until drained
};

// SendAsync of kRecordsPerCall records until `n` are durable; then Flush.
SpoolRun SendAsyncRun(SpooledProducer& spool, int64_t n) {
  const std::string value = RandomBytes(kValueBytes, 9);
  const double cpu_start = ProcessCpuSeconds();
  const double sender_start = ThreadCpuSeconds();
  double sender = 0;
  Stopwatch watch;
  SendAsyncUntilDurable(spool, kTopic, value, n, kRecordsPerCall, kPartitions,
                        [&] { sender = ThreadCpuSeconds() - sender_start; });
  const double seconds = watch.Seconds();
  if (absl::Status s = spool.Flush(std::chrono::seconds(120)); !s.ok()) {
    Die("Flush: " + s.ToString());
  }
  const double cpu = ProcessCpuSeconds() - cpu_start;
  return {static_cast<double>(n) / seconds,
          sender / static_cast<double>(n) * 1e6,
          cpu / static_cast<double>(n) * 1e6};
}

void SpoolSendAsync(int rounds, int64_t n, const std::string& dir) {
  std::printf(
      "\n3. spool SendAsync(%d x %zu B) until durable (exactly-once, "
      "SyncPolicy::kAlways, in-process bundled broker in memory), %lld "
      "records per run, median of %d rounds\n",
      kRecordsPerCall, kValueBytes, static_cast<long long>(n), rounds);
  auto started = broker::Broker::Start({});
  if (!started.ok()) Die("cannot start the bundled broker");
  std::unique_ptr<broker::Broker> b = std::move(*started);
  if (!b->CreateTopic(kTopic, kPartitions).ok()) Die("create topic");
  std::unique_ptr<SpooledProducer> spool =
      OpenSpool(dir + "/spool", b->bootstrap_servers());
  SendAsyncRun(*spool, n);  // warm-up: RocksDB, librdkafka, the broker's log
  std::vector<double> before, after, sender_before, sender_after, cpu_before,
      cpu_after;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 2; ++k) {
      const bool software = (k + r) % 2 == 0;
      crc32c::ForceImplementationForBenchmark(
          software ? Implementation::kPortable : Implementation::kAuto);
      SpoolRun run = SendAsyncRun(*spool, n);
      (software ? before : after).push_back(run.records_per_s);
      (software ? sender_before : sender_after)
          .push_back(run.sender_us_per_record);
      (software ? cpu_before : cpu_after).push_back(run.cpu_us_per_record);
    }
  }
  crc32c::ForceImplementationForBenchmark(Implementation::kAuto);
  spool->Close().IgnoreError();
  PrintRow("before (table): durable rec/s", "rec/s", before);
  PrintRow("after (Extend()): durable rec/s", "rec/s", after);
  PrintRatio("after / before, durable rec/s", after, before);
  PrintRow("before (table): sender CPU/record", "us", sender_before, 3);
  PrintRow("after (Extend()): sender CPU/record", "us", sender_after, 3);
  PrintRatio("after / before, sender CPU/record", sender_after, sender_before);
  PrintRow("before (table): CPU/record, drained", "us", cpu_before, 3);
  PrintRow("after (Extend()): CPU/record, drained", "us", cpu_after, 3);
  PrintRatio("after / before, CPU/record, drained", cpu_after, cpu_before);
}

}  // namespace
}  // namespace exactly::bench

int main(int argc, char** argv) {
  using namespace exactly::bench;  // NOLINT
  Args args(argc, argv);
  const int rounds = static_cast<int>(args.Int("--rounds", 5));
  const double seconds =
      static_cast<double>(args.Int("--millis", 200)) / 1000.0;
  const int spool_rounds = static_cast<int>(args.Int("--spool-rounds", 7));
  const int64_t spool_records = args.Int("--spool-records", 500000);
  TempDir temp;
  const std::string dir = args.Str("--dir", temp.path());
  std::filesystem::create_directories(dir);

  std::printf(
      "crc_bench: CRC-32C, the table (\"before\", forced) against Extend()'s "
      "choice by CPU (\"after\": %s), same run, rounds alternating\n\n",
      exactly::crc32c::HardwareAvailable() ? "SSE4.2, three streams from 768 B"
                                           : "no SSE4.2 here: the table too");
  std::fflush(stdout);
  RawThroughput(rounds, seconds);
  std::fflush(stdout);
  BrokerProducePath(rounds, seconds);
  std::fflush(stdout);
  SpoolSendAsync(spool_rounds, spool_records, dir);
  return 0;
}
