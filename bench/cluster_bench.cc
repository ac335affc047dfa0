// Cluster mode (issue 19, "Speed") against the single bundled broker, in the
// same process, with the same client code: librdkafka, 100-byte records.
//
//   cluster_bench [--records N=1000000] [--rounds R=5] [--data-dir DIR]
//                 [--start-runs S=9] [--failover-runs F=7]
//                 [--debug CONTEXTS] 2>/dev/null
//
// 1. Throughput, 3 partitions, raw librdkafka (raw_producer.h). Each round
//    starts four fresh targets, in an order that rotates from round to round,
//    and produces N records to each: the single broker (Broker::Start) and a
//    3-broker Cluster with the topic at RF=3, each with acks=all + idempotence
//    and with acks=1 (idempotence off: it needs acks=all). Ratio: the median
//    of the per-round ratios. Targets: cluster acks=all >= 0.5x single
//    acks=all; cluster acks=1 >= 0.8x single, read as the single broker's
//    acks=1 (same acks on both sides, so the ratio is what the cluster costs;
//    the ratio to single acks=all is printed too). In memory, or with
//    --data-dir DIR every target gets a fresh folder under DIR (each broker of
//    a cluster its own).
// 2. Start to the first acks=all acknowledgement, in-process, topic creation
//    included: a 3-broker cluster (RF=3 topic) vs the single broker, median of
//    S runs each, interleaved. Target: cluster <= 50 ms. Printed too: the
//    start and topic creation alone (the rest is the client), and the max (an
//    occasional run near 1 s, on either side alike, is librdkafka waiting on
//    one of its 1-second timers).
// 3. Leader failover: an idempotent acks=all producer writes one record per
//    millisecond to an RF=3 partition; the leader is stopped (Broker::Stop: it
//    leaves the cluster, the controller elects the next ISR member, then it
//    closes its connections). Measured: from the Stop() call to the first
//    delivery report of a record produced after it. F runs each of three
//    client variants, interleaved (see main(): librdkafka's defaults, its
//    back-offs cut, and a connection to every broker); median and max of
//    each, and what dominates. --debug sets librdkafka's `debug` in those
//    producers (its log on stderr, stamped with wall-clock seconds; each run
//    prints the wall-clock time of its Stop()), to see where the time goes.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_producer.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/cluster.h"

namespace exactly::bench {
namespace {

constexpr int kPartitions = 3;
constexpr size_t kValueBytes = 100;

using Properties = std::map<std::string, std::string>;

// A running single broker or cluster with one topic.
struct Started {
  std::string bootstrap;
  std::shared_ptr<broker::Cluster> cluster;  // null for the single broker
  std::function<void()> stop;
};

Started StartSingle(const std::string& data_dir, const std::string& topic,
                    int partitions) {
  broker::BrokerOptions options;
  options.data_dir = data_dir;
  auto b = broker::Broker::Start(options);
  if (!b.ok()) Die("single broker: " + std::string(b.status().message()));
  std::shared_ptr<broker::Broker> broker(std::move(*b));
  if (!broker->CreateTopic(topic, partitions).ok()) Die("create topic");
  return {broker->bootstrap_servers(), nullptr,
          [broker] { (void)broker->Stop(); }};
}

Started StartCluster(const std::string& data_dir, const std::string& topic,
                     int partitions) {
  broker::ClusterOptions options;
  options.brokers = 3;
  options.broker.data_dir = data_dir;
  auto c = broker::Cluster::Start(options);
  if (!c.ok()) Die("cluster: " + std::string(c.status().message()));
  std::shared_ptr<broker::Cluster> cluster(std::move(*c));
  if (!cluster->CreateTopic(topic, partitions, 3).ok()) Die("create topic");
  return {cluster->bootstrap_servers(), cluster,
          [cluster] { (void)cluster->Stop(); }};
}

// ---- 1. Throughput ----

struct Throughput {
  std::string name;
  bool cluster;
  Properties overrides;  // on top of ProducerTuning() (acks=all, idempotent)
  std::vector<double> rates, cpu_us;
};

// After an acks=all run: every partition still has its 3 replicas in sync
// and each holds the leader's whole log, so the rate counts only records
// that every replica had when they were acknowledged.
void CheckReplicated(broker::Cluster& cluster) {
  for (int p = 0; p < kPartitions; ++p) {
    auto placement = cluster.DescribePartition("produce", p);
    if (!placement.ok() || placement->isr.size() != 3)
      Die("acks=all run: the ISR shrank");
    const int64_t end =
        cluster.broker(placement->leader).Offsets("produce", p)->log_end_offset;
    for (int32_t replica : placement->replicas) {
      if (cluster.broker(replica).Offsets("produce", p)->log_end_offset < end)
        Die("acks=all run: a replica lacks acknowledged records");
    }
  }
}

void RunThroughput(Throughput& t, const std::string& data_dir, int64_t n) {
  if (!data_dir.empty()) std::filesystem::remove_all(data_dir);
  Started s = t.cluster ? StartCluster(data_dir, "produce", kPartitions)
                        : StartSingle(data_dir, "produce", kPartitions);
  const double cpu_start = ProcessCpuSeconds();
  t.rates.push_back(RawProduceRate(s.bootstrap, "produce", n, kPartitions,
                                   kValueBytes, t.overrides));
  t.cpu_us.push_back((ProcessCpuSeconds() - cpu_start) * 1e6 /
                     static_cast<double>(n));
  if (t.cluster && t.overrides.empty()) CheckReplicated(*s.cluster);
  s.stop();
  if (!data_dir.empty()) std::filesystem::remove_all(data_dir);
}

// ---- 2. Start to first acknowledgement ----

// Milliseconds from the start to the first ack, and of them the start and
// the topic's creation alone.
struct FirstAck {
  double total_ms = 0, start_ms = 0;
};

FirstAck FirstAckMs(bool cluster) {
  Stopwatch watch;
  Started s =
      cluster ? StartCluster("", "first", 1) : StartSingle("", "first", 1);
  FirstAck r;
  r.start_ms = watch.Seconds() * 1000;
  Properties props = ProducerTuning();
  props["bootstrap.servers"] = s.bootstrap;
  RdKafka p = NewClient(RD_KAFKA_PRODUCER, props);
  ProduceOrDie(p.get(), "first", 0, "x");
  if (rd_kafka_flush(p.get(), 30000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die("first ack");
  r.total_ms = watch.Seconds() * 1000;
  p.reset();
  s.stop();
  return r;
}

// ---- 3. Leader failover ----

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Each record's opaque is the time it was produced; the delivery report of
// the first record produced after `stop_ns` sets `first_ack_ns`.
struct FailoverProbe {
  std::atomic<int64_t> stop_ns{INT64_MAX};
  std::atomic<int64_t> first_ack_ns{0};
  std::atomic<int64_t> acked{0}, failed{0};
};

void OnFailoverDelivery(rd_kafka_t*, const rd_kafka_message_t* m,
                        void* opaque) {
  auto* probe = static_cast<FailoverProbe*>(opaque);
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    probe->failed.fetch_add(1);
    return;
  }
  probe->acked.fetch_add(1);
  const auto produced_ns = reinterpret_cast<intptr_t>(m->_private);
  if (produced_ns >= probe->stop_ns.load() && probe->first_ack_ns.load() == 0)
    probe->first_ack_ns.store(NowNs());
}

struct FailoverRun {
  double stop_ms = 0;       // the Stop() call itself
  double first_ack_ms = 0;  // from the Stop() call; -1: none within 30 s
  int32_t old_leader = -1, new_leader = -1;
  double stop_unix_s = 0;  // wall clock, to match librdkafka's debug log
};

FailoverRun Failover(const Properties& client) {
  Started s = StartCluster("", "failover", 1);
  FailoverProbe probe;
  Properties props = ProducerTuning();
  for (const auto& [k, v] : client) props[k] = v;
  props["bootstrap.servers"] = s.bootstrap;
  RdKafka p = NewClient(RD_KAFKA_PRODUCER, props, OnFailoverDelivery, &probe);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    const std::string value(kValueBytes, 'f');
    while (!done.load()) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          p.get(), RD_KAFKA_V_TOPIC("failover"), RD_KAFKA_V_PARTITION(0),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(NowNs())), RD_KAFKA_V_END);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR &&
          err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        Die(rd_kafka_err2str(err));
      rd_kafka_poll(p.get(), 1);  // ~1 record/ms; serves delivery reports
    }
  });
  // Steady state first: 200 records acknowledged.
  Stopwatch warm_up;
  while (probe.acked.load() < 200 && warm_up.Seconds() < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (probe.acked.load() < 200) Die("failover: no steady state");
  FailoverRun r;
  r.old_leader = s.cluster->DescribePartition("failover", 0)->leader;
  r.stop_unix_s = std::chrono::duration<double>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  const int64_t stop_ns = NowNs();
  probe.stop_ns.store(stop_ns);
  if (!s.cluster->broker(r.old_leader).Stop().ok()) Die("stop");
  r.stop_ms = static_cast<double>(NowNs() - stop_ns) / 1e6;
  r.new_leader = s.cluster->DescribePartition("failover", 0)->leader;
  Stopwatch wait;
  while (probe.first_ack_ns.load() == 0 && wait.Seconds() < 30)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const int64_t first_ack_ns = probe.first_ack_ns.load();
  r.first_ack_ms = first_ack_ns == 0
                       ? -1
                       : static_cast<double>(first_ack_ns - stop_ns) / 1e6;
  done.store(true);
  writer.join();
  rd_kafka_purge(p.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  p.reset();
  s.stop();
  return r;
}

// librdkafka's value of each property in `names`.
Properties LibrdkafkaDefaults(const Properties& names) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  Properties out;
  for (const auto& [name, unused] : names) {
    char value[256];
    size_t size = sizeof value;
    if (rd_kafka_conf_get(conf, name.c_str(), value, &size) != RD_KAFKA_CONF_OK)
      Die("unknown property " + name);
    out[name] = value;
  }
  rd_kafka_conf_destroy(conf);
  return out;
}

std::string Join(const Properties& p) {
  std::string out;
  for (const auto& [k, v] : p) out += (out.empty() ? "" : ", ") + k + "=" + v;
  return out;
}

void ThroughputSection(int64_t n, int rounds, const std::string& data_root,
                       Verdict& v) {
  const Properties acks1 = {{"acks", "1"}, {"enable.idempotence", "false"}};
  std::vector<Throughput> targets = {
      {"single, acks=all idempotent", false, {}, {}, {}},
      {"cluster RF=3, acks=all idempotent", true, {}, {}, {}},
      {"single, acks=1", false, acks1, {}, {}},
      {"cluster RF=3, acks=1", true, acks1, {}, {}},
  };
  const std::string data_dir = data_root.empty() ? "" : data_root + "/run";
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < targets.size(); ++k)
      RunThroughput(targets[(k + static_cast<size_t>(r)) % targets.size()],
                    data_dir, n);
    std::printf("round %d, rec/s:", r + 1);
    for (const Throughput& t : targets)
      std::printf(" %s %.0f%s", t.name.c_str(), t.rates.back(),
                  &t == &targets.back() ? "\n" : ";");
    std::fflush(stdout);
  }
  std::printf("\n%-36s %12s %16s\n", "target (median)", "rec/s",
              "CPU us/record");
  for (const Throughput& t : targets)
    std::printf("%-36s %12.0f %16.2f\n", t.name.c_str(), Median(t.rates),
                Median(t.cpu_us));
  const double all_ratio = MedianOfRatios(targets[1].rates, targets[0].rates);
  const double one_ratio = MedianOfRatios(targets[3].rates, targets[2].rates);
  const double one_vs_all = MedianOfRatios(targets[3].rates, targets[0].rates);
  std::printf(
      "cluster / single (median of per-round ratios): acks=all %.2fx; acks=1 "
      "%.2fx (vs single acks=1), %.2fx (vs single acks=all)\n",
      all_ratio, one_ratio, one_vs_all);
  v.Check("cluster acks=all >= 0.5x single acks=all", all_ratio, 0.5);
  v.Check("cluster acks=1 >= 0.8x single acks=1", one_ratio, 0.8);
}

void StartSection(int runs, Verdict& v) {
  std::vector<double> single_ms, cluster_ms, single_start, cluster_start;
  for (int r = 0; r < runs; ++r) {
    const FirstAck single = FirstAckMs(false), cluster = FirstAckMs(true);
    single_ms.push_back(single.total_ms);
    single_start.push_back(single.start_ms);
    cluster_ms.push_back(cluster.total_ms);
    cluster_start.push_back(cluster.start_ms);
  }
  std::printf(
      "\nstart to first acks=all ack, in-process, topic creation included "
      "(median of %d): single %.1f ms, 3-broker cluster RF=3 %.1f ms "
      "(%.2fx single); max: single %.1f ms, cluster %.1f ms\n"
      "  of which start + topic creation (median): single %.1f ms, cluster "
      "%.1f ms; the rest is librdkafka (connect, InitProducerId, metadata, "
      "linger.ms=5)\n",
      runs, Median(single_ms), Median(cluster_ms),
      MedianOfRatios(cluster_ms, single_ms), Percentile(single_ms, 100),
      Percentile(cluster_ms, 100), Median(single_start), Median(cluster_start));
  v.CheckAtMost("cluster start to first ack <= 50 ms", Median(cluster_ms), 50);
}

void FailoverSection(int runs, const std::string& debug) {
  // librdkafka opens connections lazily (bootstrap through one broker, then
  // the leaders it needs). When its only connection was to the stopped
  // leader, it has no broker to ask for metadata: the refresh is dropped
  // ("no usable brokers", then "already being requested") and comes back only
  // with its 1-second topic scan (a fixed timer), so such a run takes up to
  // ~1 s; with a live connection to another broker the refresh is immediate
  // and the run takes about a linger.ms. Hence three variants: librdkafka's
  // defaults; its back-offs cut (they do not touch that timer); and a
  // connection to every broker (the hidden enable.sparse.connections=false).
  const Properties backoffs = {
      {"retry.backoff.ms", "10"},
      {"topic.metadata.refresh.fast.interval.ms", "10"},
      {"reconnect.backoff.ms", "10"},
      {"reconnect.backoff.max.ms", "100"}};
  Properties all_brokers = backoffs;
  all_brokers["enable.sparse.connections"] = "false";
  struct Variant {
    std::string name;
    Properties client;
    std::vector<double> ms;
  };
  std::vector<Variant> variants = {
      {"default", LibrdkafkaDefaults(backoffs), {}},
      {"backoffs", backoffs, {}},
      {"all-conn", all_brokers, {}}};
  std::printf(
      "\nleader failover, Stop() of the leader to the first ack of a "
      "record produced after it (%d runs each):\n",
      runs);
  for (int r = 0; r < runs; ++r) {
    for (Variant& variant : variants) {
      Properties client = variant.client;
      if (!debug.empty()) client["debug"] = debug;
      FailoverRun f = Failover(client);
      // A run with no ack counts as the 30 s it waited.
      variant.ms.push_back(f.first_ack_ms < 0 ? 30000 : f.first_ack_ms);
      std::printf(
          "  run %d %-8s leader %d -> %d, Stop() %.1f ms, first ack %.1f ms",
          r + 1, variant.name.c_str(), f.old_leader, f.new_leader, f.stop_ms,
          f.first_ack_ms);
      if (f.first_ack_ms < 0) std::printf(" (none within 30 s)");
      if (!debug.empty()) std::printf(" (stopped at %.3f)", f.stop_unix_s);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  for (const Variant& variant : variants)
    std::printf("%-8s median %7.1f ms, max %7.1f ms  (%s)\n",
                variant.name.c_str(), Median(variant.ms),
                Percentile(variant.ms, 100), Join(variant.client).c_str());
  std::printf(
      "what dominates: Stop() (election included) takes about a millisecond; "
      "then librdkafka. With a live connection to another broker it learns "
      "the new leader at once and the first ack follows within about "
      "linger.ms (5 ms); when its only connection was to the old leader it "
      "waits for the next tick of its fixed 1-second topic scan (the runs of "
      "up to 1 s), which no back-off setting shortens; a connection to every "
      "broker avoids it.\n");
}

}  // namespace
}  // namespace exactly::bench

int main(int argc, char** argv) {
  using namespace exactly::bench;  // NOLINT
  Args args(argc, argv);
  const int64_t n = args.Int("--records", 1000000);
  const int rounds = static_cast<int>(args.Int("--rounds", 5));
  const std::string data_root = args.Str("--data-dir", "");
  const int start_runs = static_cast<int>(args.Int("--start-runs", 9));
  const int failover_runs = static_cast<int>(args.Int("--failover-runs", 7));
  const std::string debug = args.Str("--debug", "");
  std::printf(
      "cluster_bench: librdkafka %s, %zu-byte records, %d partitions, "
      "%lld records per run, median of %d rounds, %s\n",
      rd_kafka_version_str(), kValueBytes, kPartitions,
      static_cast<long long>(n), rounds,
      data_root.empty() ? "in memory"
                        : ("data dir under " + data_root).c_str());
  // A section with 0 runs (e.g. --rounds 0) is skipped, verdict included.
  Verdict v;
  if (rounds > 0) ThroughputSection(n, rounds, data_root, v);
  if (start_runs > 0) StartSection(start_runs, v);
  if (failover_runs > 0) FailoverSection(failover_runs, debug);
  return v.Print();
}
