// The bundled broker against librdkafka's mock cluster, same process, same
// client code: librdkafka, 100-byte records, acks=all, idempotence on, 3
// partitions.
//
//   broker_bench [--produce-records N] [--consume-records N] [--rounds R=5]
//   [--retention-bytes B=5242880] [--consume-passes P=20] [--broker-bin PATH]
//   (--produce-records 0 skips the produce runs: for profiling consume; its
//   produce verdicts are then meaningless)
//
// Prints, for each target, produce and consume throughput (median of R rounds),
// the ratio to the mock cluster (the median of the per-round ratios),
// start-to-first-ack times, and resident memory against the bytes the broker
// retains. Targets (issue "Bundled broker, part 1"): in memory produce and
// consume >= 1.0x the mock; with a data dir >= 0.5x; first ack <= 20 ms
// in-process and <= 100 ms as a binary; RSS < 2 x retained + 50 MB.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_producer.h"
#include "exactly/broker/broker.h"

namespace exactly::bench {
namespace {

constexpr int kPartitions = 3;
constexpr size_t kValueBytes = 100;

// A broker under test: bootstrap servers plus whatever keeps it alive.
struct Target {
  std::string name;
  std::string bootstrap;
  std::function<void()> stop;
};

// `topic_configs`: RetentionConfigs(--retention-bytes), the mock cluster's
// bound by default.
// `max_frame_waste_bytes` -1: batches never copied out of sparse frame chunks
// (the broker before its log memory was bounded), to measure what the bound
// costs.
Target StartBundled(const std::string& name, const std::string& data_dir,
                    const std::map<std::string, std::string>& topic_configs,
                    int64_t max_frame_waste_bytes =
                        broker::BrokerOptions{}.max_frame_waste_bytes) {
  broker::BrokerOptions options;
  options.data_dir = data_dir;
  options.max_frame_waste_bytes = max_frame_waste_bytes;
  auto b = broker::Broker::Start(options);
  if (!b.ok())
    Die("cannot start the bundled broker: " +
        std::string(b.status().message()));
  std::shared_ptr<broker::Broker> broker(std::move(*b));
  for (const char* topic : {"produce", "consume"}) {
    if (!broker->CreateTopic(topic, kPartitions, topic_configs).ok())
      Die("cannot create a topic");
  }
  return {name, broker->bootstrap_servers(),
          [broker]() mutable { broker.reset(); }};
}

Target StartMock() {
  char err[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (handle == nullptr) Die(err);
  rd_kafka_mock_cluster_t* mock = rd_kafka_mock_cluster_new(handle, 1);
  if (mock == nullptr) Die("rd_kafka_mock_cluster_new failed");
  for (const char* topic : {"produce", "consume"}) {
    rd_kafka_mock_topic_create(mock, topic, kPartitions, 1);
  }
  std::string bootstrap = rd_kafka_mock_cluster_bootstraps(mock);
  return {"librdkafka mock cluster", bootstrap, [mock, handle] {
            rd_kafka_mock_cluster_destroy(mock);
            rd_kafka_destroy(handle);
          }};
}

RdKafka Producer(const std::string& bootstrap) {
  return NewClient(RD_KAFKA_PRODUCER,
                   {{"bootstrap.servers", bootstrap},
                    {"enable.idempotence", "true"},
                    {"acks", "all"},
                    {"linger.ms", "5"},
                    {"queue.buffering.max.messages", "1000000"}});
}

struct ProduceResult {
  double records_per_second = 0;
  double cpu_us_per_record = 0;  // the whole process: client and broker
};

// Records per second produced and acknowledged, by the same raw librdkafka
// loop sdk_bench and spool_bench use (delivery reports served on the
// producing thread every 1,000 records, every one checked).
ProduceResult ProduceThroughput(const std::string& bootstrap,
                                const std::string& topic, int64_t n) {
  const double cpu_start = ProcessCpuSeconds();
  ProduceResult r;
  r.records_per_second =
      RawProduceRate(bootstrap, topic, n, kPartitions, kValueBytes);
  r.cpu_us_per_record =
      (ProcessCpuSeconds() - cpu_start) * 1e6 / static_cast<double>(n);
  return r;
}

// Records per second read from the beginning of `topic` by an assign-only
// consumer, from its first record to its last, over `passes` fresh consumers.
// The time before the first record is left out: librdkafka looks up the start
// offset only when a retry timer fires (500 ms after assign), whatever the
// broker, and that would dwarf the reading itself.
double ConsumeThroughput(const std::string& bootstrap, const std::string& topic,
                         int64_t n, int passes) {
  double seconds = 0;
  for (int pass = 0; pass < passes; ++pass) {
    RdKafka c = AssignedConsumer(bootstrap, topic, kPartitions,
                                 {{"group.id", "bench"}});
    int64_t got = 0;
    std::optional<Stopwatch> since_first;
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (got < n && std::chrono::steady_clock::now() < deadline) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(c.get(), 100);
      if (m == nullptr) continue;
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (got++ == 0) since_first.emplace();
      }
      rd_kafka_message_destroy(m);
    }
    if (got < n) {
      Die("consumer read " + std::to_string(got) + " of " + std::to_string(n));
    }
    // The first record's own time is not measured: n - 1 records.
    seconds += since_first->Seconds();
    rd_kafka_consumer_close(c.get());
  }
  return static_cast<double>((n - 1) * passes) / seconds;
}

// Milliseconds from "start the broker" to the first acknowledged record.
double FirstAckInProcess() {
  Stopwatch watch;
  auto b = broker::Broker::Start({});
  if (!b.ok()) Die("start");
  RdKafka p = Producer((*b)->bootstrap_servers());
  ProduceOrDie(p.get(), "first", 0, "x");
  if (rd_kafka_flush(p.get(), 30000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die("first ack");
  return watch.Seconds() * 1000;
}

double FirstAckBinary(const std::string& binary) {
  Stopwatch watch;
  ChildProcess child = SpawnBroker(binary, {"--port", "0"});
  RdKafka p = Producer(child.bootstrap);
  ProduceOrDie(p.get(), "first", 0, "x");
  if (rd_kafka_flush(p.get(), 30000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die("first ack");
  double ms = watch.Seconds() * 1000;
  child.Stop();
  return ms;
}

}  // namespace
}  // namespace exactly::bench

int main(int argc, char** argv) {
  using namespace exactly::bench;  // NOLINT
  Args args(argc, argv);
  int64_t produce_n = args.Int("--produce-records", 1000000);
  // The mock cluster keeps about 5 MiB per partition; stay under it so that
  // both serve the same records.
  int64_t consume_n = args.Int("--consume-records", 120000);
  int consume_passes = static_cast<int>(args.Int("--consume-passes", 20));
  int rounds = static_cast<int>(args.Int("--rounds", 5));
  const std::map<std::string, std::string> topic_configs =
      RetentionConfigs(args.Int("--retention-bytes", kMockRetentionBytes));
  std::string binary = args.Str("--broker-bin", DefaultBrokerBinary(argv[0]));

  std::printf(
      "broker_bench: librdkafka %s, %zu-byte records, acks=all, idempotent, %d "
      "partitions,"
      " median of %d rounds\n",
      rd_kafka_version_str(), kValueBytes, kPartitions, rounds);
  TempDir dir;
  struct Row {
    std::string name;
    double produce, consume, produce_cpu_us;
    double produce_ratio, consume_ratio;  // to the mock cluster
  };
  std::vector<Row> rows;
  std::vector<std::function<Target()>> targets = {
      [] { return StartMock(); },
      [&] {
        return StartBundled("bundled broker, in memory", "", topic_configs);
      },
      [&] {
        return StartBundled("bundled broker, --data-dir", dir.path() + "/data",
                            topic_configs);
      },
      [&] {
        return StartBundled("in memory, memory unbounded", "", topic_configs,
                            /*max_frame_waste_bytes=*/-1);
      },
  };
  // Each round starts every target, then runs the produce measurements back to
  // back, then the consume ones, in an order that rotates from round to round:
  // the runs compared with each other are seconds apart, so that a noisy
  // stretch on a shared machine lands on all of them alike. Each verdict is the
  // median of the per-round ratios to the mock.
  std::vector<std::vector<double>> produce(targets.size()),
      consume(targets.size()), produce_cpu(targets.size());
  std::vector<std::string> names(targets.size());
  for (int r = 0; r < rounds; ++r) {
    std::vector<Target> started;
    for (const auto& start : targets) started.push_back(start());
    auto in_rotated_order = [&](const std::function<void(size_t)>& fn) {
      for (size_t k = 0; k < started.size(); ++k) {
        fn((k + static_cast<size_t>(r)) % started.size());
      }
    };
    in_rotated_order([&](size_t i) {
      names[i] = started[i].name;
      if (produce_n == 0) {  // --produce-records 0: consume only (profiling)
        produce[i].push_back(0);
        produce_cpu[i].push_back(0);
        return;
      }
      ProduceResult pr =
          ProduceThroughput(started[i].bootstrap, "produce", produce_n);
      produce[i].push_back(pr.records_per_second);
      produce_cpu[i].push_back(pr.cpu_us_per_record);
    });
    // Fill each consume topic (untimed), then read them back (timed).
    in_rotated_order([&](size_t i) {
      RdKafka p = Producer(started[i].bootstrap);
      std::string value(kValueBytes, 'x');
      for (int64_t k = 0; k < consume_n; ++k) {
        ProduceOrDie(p.get(), "consume", static_cast<int32_t>(k % kPartitions),
                     value);
      }
      rd_kafka_flush(p.get(), 60000);
    });
    in_rotated_order([&](size_t i) {
      consume[i].push_back(ConsumeThroughput(started[i].bootstrap, "consume",
                                             consume_n, consume_passes));
    });
    for (Target& t : started) t.stop();
    std::filesystem::remove_all(dir.path() + "/data");
    std::printf("round %d, produce / consume rec/s:", r + 1);
    for (size_t i = 0; i < targets.size(); ++i) {
      std::printf(" %s %.0f / %.0f%s", names[i].c_str(), produce[i].back(),
                  consume[i].back(), i + 1 == targets.size() ? "\n" : ";");
    }
    std::fflush(stdout);
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    rows.push_back({names[i], Median(produce[i]), Median(consume[i]),
                    Median(produce_cpu[i]),
                    MedianOfRatios(produce[i], produce[0]),
                    MedianOfRatios(consume[i], consume[0])});
  }
  std::printf(
      "\n%-30s %14s %8s %14s %8s   (ratio: median of the per-round ratios to "
      "the mock)\n",
      "target", "produce rec/s", "ratio", "consume rec/s", "ratio");
  for (const Row& r : rows) {
    std::printf("%-30s %14.0f %7.2fx %14.0f %7.2fx\n", r.name.c_str(),
                r.produce, r.produce_ratio, r.consume, r.consume_ratio);
  }
  std::printf(
      "process CPU per produced record (client + broker threads, median):");
  for (const Row& r : rows) {
    std::printf(" %s %.2f us%s", r.name.c_str(), r.produce_cpu_us,
                &r == &rows.back() ? "\n" : ",");
  }
  Verdict v;
  v.Check("in memory: produce >= 1.0x mock", rows[1].produce_ratio, 1.0);
  v.Check("in memory: consume >= 1.0x mock", rows[1].consume_ratio, 1.0);
  v.Check("data dir:  produce >= 0.5x mock", rows[2].produce_ratio, 0.5);
  v.Check("data dir:  consume >= 0.5x mock", rows[2].consume_ratio, 0.5);
  // What bounding the log's memory costs produce (issue 18): the same broker
  // with and without copying batches out of sparse frame chunks.
  const double bound_cost = MedianOfRatios(produce[1], produce[3]);
  std::printf(
      "\nproduce in memory, log memory bounded / unbounded: %.2fx (median of "
      "the per-round ratios)\n",
      bound_cost);
  v.Check("bounded log memory: produce >= 0.9x unbounded", bound_cost, 0.9);

  std::vector<double> in_process, as_binary;
  for (int r = 0; r < std::max(rounds, 5); ++r) {
    in_process.push_back(FirstAckInProcess());
    as_binary.push_back(FirstAckBinary(binary));
  }
  std::printf(
      "\nstart to first acknowledged record: in-process %.1f ms, binary %.1f "
      "ms (median)\n",
      Median(in_process), Median(as_binary));
  v.CheckAtMost("first ack in-process <= 20 ms", Median(in_process), 20);
  v.CheckAtMost("first ack as a binary <= 100 ms", Median(as_binary), 100);

  MemoryResult mem = MeasureBinaryMemory(binary, 1000000, kValueBytes);
  std::printf(
      "\nmemory: exactly-broker binary, %lld records retained (%.1f MB in "
      "batches): "
      "RSS %.1f MB, limit 2 x retained + 50 MB = %.1f MB\n",
      static_cast<long long>(mem.records), mem.retained_bytes / 1e6,
      mem.rss_bytes / 1e6, (2 * mem.retained_bytes + 50e6) / 1e6);
  v.CheckAtMost("RSS < 2 x retained + 50 MB (MB)", mem.rss_bytes / 1e6,
                (2 * mem.retained_bytes + 50e6) / 1e6);
  return v.Print();
}
