// Consumer groups on the bundled broker against librdkafka's mock cluster, same
// process, same client code (librdkafka, 100-byte records).
//
//   group_bench [--records N] [--partitions P] [--rounds R]
//               [--rebalance-rounds R] [--delay-ms D]
//
// 1. Throughput: N records (default 1,000,000) are produced once, untimed, into
//    each cluster; then, in interleaved rounds, a group of 2 consumers (one
//    thread each, subscribe, auto.offset.reset=earliest, a fresh group id each
//    round) reads until the group has consumed all N. Throughput is N over the
//    time from the group's first record to its last: the group's formation is
//    measured separately (the mock cluster always holds a first join for 3 s,
//    the bundled broker for its initial rebalance delay). The wall time from
//    subscribe is printed too.
//    The mock cluster keeps at most 5 MiB per partition and drops older
//    batches, so the records are spread over 32 partitions by default (about
//    3.4 MB each) and the bench checks that both clusters still hold all N.
// 2. Rebalance: 4 consumers, created beforehand, subscribe at the same moment;
//    the time is from subscribe to the moment every member has its first record
//    (and, for diagnosis, its assignment). The bundled broker runs with
//    group_initial_rebalance_delay_ms = D (default 300; Kafka's
//    group.initial.rebalance.delay.ms). The group has offsets committed before
//    it starts, as a restarting group has. Context rows, no target: a new group
//    (each member resets its offsets, which librdkafka 2.0 starts only after a
//    100 ms timer), the bundled broker with D = 0 (late members wait for the
//    next heartbeat to rebalance), and the mock cluster (its first join always
//    waits 3000 ms).
//
// The bundled broker logs group events to stderr; add 2>/dev/null for the
// table alone. Takes about 1 to 1.5 minutes with the defaults.
//
// Targets (issue 3): consume >= 1.0x the mock cluster; a rebalance of 4 members
// within Kafka's schedule plus the slack issue 3 allowed (0.2 x D + 50 ms).
// Issue 3 set 1.2 x D + 50 when the delay was one quiet period; since issue 21
// the delay is Kafka's InitialDelayedJoin, under which members that join
// during the first delay extend it by a second whole one, so the schedule is
// 2 x D and the target 2.2 x D + 50 ms. Medians over rounds; the best round
// is printed as well.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <latch>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "exactly/broker/broker.h"

namespace exactly::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kValueBytes = 100;
constexpr char kTopic[] = "group";

double SecondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A cluster under test: bootstrap servers plus whatever keeps it alive.
struct Cluster {
  std::string name;
  std::string bootstrap;
  std::function<void()> stop;
};

Cluster StartBundled(const std::string& name, int partitions, int delay_ms) {
  broker::BrokerOptions options;
  options.group_initial_rebalance_delay_ms = delay_ms;
  auto b = broker::Broker::Start(options);
  if (!b.ok()) {
    Die("cannot start the bundled broker: " +
        std::string(b.status().message()));
  }
  std::shared_ptr<broker::Broker> broker(std::move(*b));
  if (!broker->CreateTopic(kTopic, partitions).ok()) {
    Die("cannot create a topic");
  }
  return {name, broker->bootstrap_servers(),
          [broker]() mutable { broker.reset(); }};
}

Cluster StartMock(int partitions) {
  char err[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (handle == nullptr) Die(err);
  rd_kafka_mock_cluster_t* mock = rd_kafka_mock_cluster_new(handle, 1);
  if (mock == nullptr) Die("rd_kafka_mock_cluster_new failed");
  if (rd_kafka_mock_topic_create(mock, kTopic, partitions, 1) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    Die("cannot create a mock topic");
  }
  std::string bootstrap = rd_kafka_mock_cluster_bootstraps(mock);
  return {"librdkafka mock cluster", bootstrap, [mock, handle] {
            rd_kafka_mock_cluster_destroy(mock);
            rd_kafka_destroy(handle);
          }};
}

// Produces n records round-robin over the partitions (untimed set-up).
void Fill(const std::string& bootstrap, int partitions, int64_t n) {
  RdKafka p = NewClient(RD_KAFKA_PRODUCER,
                        {{"bootstrap.servers", bootstrap},
                         {"linger.ms", "20"},
                         {"queue.buffering.max.messages", "1000000"}});
  std::string value(kValueBytes, 'g');
  for (int64_t i = 0; i < n; ++i) {
    ProduceOrDie(p.get(), kTopic, static_cast<int32_t>(i % partitions), value);
  }
  if (rd_kafka_flush(p.get(), 120000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Die("fill: flush timed out");
  }
}

// Records the cluster holds in the topic (sum of high - low watermarks).
int64_t Retained(const std::string& bootstrap, int partitions) {
  RdKafka c = NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                            {"group.id", "watermarks"}});
  int64_t total = 0;
  for (int p = 0; p < partitions; ++p) {
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        c.get(), kTopic, p, &low, &high, 10000);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      Die(std::string("watermarks: ") + rd_kafka_err2str(err));
    }
    total += high - low;
  }
  return total;
}

// One consuming thread's counters, each on its own cache line: the thread
// writes them, others read them rarely.
struct alignas(64) MemberProgress {
  std::atomic<int64_t> consumed{0};
  std::atomic<int64_t> last_record_ns{0};  // since the run's start
  std::atomic<int64_t> first_record_ns{-1};
};

struct ConsumeResult {
  double records_per_second = 0;  // first record to last
  double wall_seconds = 0;        // subscribe to last record
  double formation_seconds = 0;   // subscribe to first record
  // CPU time of the whole process (consumers and broker threads) per record,
  // subscribe to last record: steadier than the rates on a shared machine.
  double cpu_us_per_record = 0;
};

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// A group of `members` consumers reads until n records have been consumed in
// all.
// `exact`: any record read twice ends the run (the bundled broker must never
// cause one); otherwise it is reported (the mock cluster's group handling
// sometimes rebalances mid-run, and members then re-read uncommitted records).
ConsumeResult ConsumeWithGroup(const std::string& bootstrap,
                               const std::string& group, int64_t n, int members,
                               bool exact) {
  std::vector<RdKafka> clients;
  for (int i = 0; i < members; ++i) {
    clients.push_back(
        NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                      {"group.id", group},
                                      {"auto.offset.reset", "earliest"},
                                      {"enable.partition.eof", "false"}}));
  }
  std::vector<MemberProgress> progress(members);
  std::atomic<bool> stop{false};
  std::latch start(members + 1);
  Clock::time_point t0;
  auto total = [&progress] {
    int64_t sum = 0;
    for (const MemberProgress& m : progress) {
      sum += m.consumed.load(std::memory_order_relaxed);
    }
    return sum;
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < members; ++i) {
    threads.emplace_back([&, i] {
      rd_kafka_t* rk = clients[i].get();
      MemberProgress& mine = progress[i];
      rd_kafka_topic_partition_list_t* topics =
          rd_kafka_topic_partition_list_new(1);
      rd_kafka_topic_partition_list_add(topics, kTopic, RD_KAFKA_PARTITION_UA);
      start.arrive_and_wait();
      rd_kafka_resp_err_t err = rd_kafka_subscribe(rk, topics);
      rd_kafka_topic_partition_list_destroy(topics);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) Die(rd_kafka_err2str(err));
      int64_t local = 0;
      uint64_t checksum = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 5);
        if (m != nullptr) {
          if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            const int64_t ns =
                std::chrono::duration_cast<std::chrono::nanoseconds>(
                    Clock::now() - t0)
                    .count();
            checksum += m->len;
            if (local == 0) mine.first_record_ns.store(ns);
            mine.consumed.store(++local, std::memory_order_relaxed);
            mine.last_record_ns.store(ns, std::memory_order_relaxed);
          }
          rd_kafka_message_destroy(m);
          if ((local & 1023) != 0) continue;
        }
        if (total() >= n) stop.store(true);
        if (SecondsBetween(t0, Clock::now()) > 120) {
          Die("group consumer: only " + std::to_string(total()) + " of " +
              std::to_string(n) + " records after 120 s");
        }
      }
      if (checksum != static_cast<uint64_t>(local) * kValueBytes) {
        Die("group consumer: unexpected record sizes");
      }
    });
  }
  const double cpu_start = ProcessCpuSeconds();
  t0 = Clock::now();
  start.arrive_and_wait();
  for (std::thread& t : threads) t.join();
  const double cpu_seconds = ProcessCpuSeconds() - cpu_start;
  int64_t first_ns = std::numeric_limits<int64_t>::max(), last_ns = 0;
  for (const MemberProgress& m : progress) {
    if (m.first_record_ns.load() >= 0) {
      first_ns = std::min(first_ns, m.first_record_ns.load());
    }
    last_ns = std::max(last_ns, m.last_record_ns.load());
  }
  if (total() != n) {
    const std::string what = "group consumed " + std::to_string(total()) +
                             " records, expected " + std::to_string(n);
    if (exact) Die(what);
    std::printf("  (mock cluster: %s: a rebalance mid-run)\n", what.c_str());
  }
  // Leaving the group is not part of the measurement.
  std::vector<std::thread> closers;
  for (RdKafka& c : clients) {
    closers.emplace_back([&c] { rd_kafka_consumer_close(c.get()); });
  }
  for (std::thread& t : closers) t.join();
  ConsumeResult r;
  r.records_per_second = static_cast<double>(n) / ((last_ns - first_ns) / 1e9);
  r.wall_seconds = last_ns / 1e9;
  r.formation_seconds = first_ns / 1e9;
  r.cpu_us_per_record = cpu_seconds * 1e6 / static_cast<double>(n);
  return r;
}

// A member of the rebalance test: when it got its assignment and its first
// record, relative to the common subscribe moment.
struct RebalanceMember {
  RdKafka rk;
  Clock::time_point t0;
  double assigned_ms = -1;
  double first_record_ms = -1;
};

void OnRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                 rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* member = static_cast<RebalanceMember*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (member->assigned_ms < 0) {
      member->assigned_ms = SecondsBetween(member->t0, Clock::now()) * 1000;
    }
    rd_kafka_assign(rk, partitions);
  } else {
    rd_kafka_assign(rk, nullptr);
  }
}

RdKafka NewRebalanceConsumer(const std::string& bootstrap,
                             const std::string& group,
                             RebalanceMember* member) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::map<std::string, std::string> props = {
      {"bootstrap.servers", bootstrap},
      {"group.id", group},
      {"auto.offset.reset", "earliest"},
      {"enable.partition.eof", "false"},
      // Nothing committed: a partition that moves to another member in a later
      // generation is read from the beginning again, so every member gets a
      // record.
      {"enable.auto.commit", "false"},
      {"log_level", "3"}};
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      Die(k + ": " + err);
    }
  }
  rd_kafka_conf_set_rebalance_cb(conf, OnRebalance);
  rd_kafka_conf_set_opaque(conf, member);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) Die(err);
  return RdKafka(rk);
}

// Commits offset 0 for every partition of the topic in `group` (a commit
// from outside the group, as an admin tool would make it).
void CommitZero(const std::string& bootstrap, const std::string& group,
                int partitions) {
  RdKafka c = NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                            {"group.id", group},
                                            {"enable.auto.commit", "false"}});
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, kTopic, p)->offset = 0;
  }
  rd_kafka_resp_err_t err = rd_kafka_commit(c.get(), list, 0);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Die(std::string("commit offsets: ") + rd_kafka_err2str(err));
  }
  rd_kafka_consumer_close(c.get());
}

struct RebalanceResult {
  double all_first_record_ms = 0;  // the last member's first record
  double all_assigned_ms = 0;      // the last member's assignment
};

// `members` consumers subscribe at once; milliseconds until every one of them
// has its assignment and its first record.
RebalanceResult Rebalance(const std::string& bootstrap,
                          const std::string& group, int members) {
  std::vector<std::unique_ptr<RebalanceMember>> group_members;
  for (int i = 0; i < members; ++i) {
    group_members.push_back(std::make_unique<RebalanceMember>());
    group_members.back()->rk =
        NewRebalanceConsumer(bootstrap, group, group_members.back().get());
  }
  std::latch start(members + 1);
  std::latch all_have_records(members);
  std::vector<std::thread> threads;
  for (int i = 0; i < members; ++i) {
    threads.emplace_back([&, i] {
      RebalanceMember& m = *group_members[i];
      rd_kafka_topic_partition_list_t* topics =
          rd_kafka_topic_partition_list_new(1);
      rd_kafka_topic_partition_list_add(topics, kTopic, RD_KAFKA_PARTITION_UA);
      start.arrive_and_wait();
      rd_kafka_resp_err_t err = rd_kafka_subscribe(m.rk.get(), topics);
      rd_kafka_topic_partition_list_destroy(topics);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) Die(rd_kafka_err2str(err));
      while (m.first_record_ms < 0) {
        rd_kafka_message_t* msg = rd_kafka_consumer_poll(m.rk.get(), 5);
        if (msg == nullptr) {
          if (SecondsBetween(m.t0, Clock::now()) > 60) {
            // Counted as 60 s (a miss), not fatal: the mock cluster's context
            // row sometimes never assigns a member.
            std::fprintf(stderr, "rebalance: a member got no record in 60 s\n");
            m.first_record_ms = 60000;
            break;
          }
          continue;
        }
        if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
          m.first_record_ms = SecondsBetween(m.t0, Clock::now()) * 1000;
        }
        rd_kafka_message_destroy(msg);
      }
      // Keep serving the group (heartbeats, callbacks) until every member has
      // its first record, so that none of them leaves early.
      all_have_records.count_down();
      while (!all_have_records.try_wait()) {
        rd_kafka_message_t* msg = rd_kafka_consumer_poll(m.rk.get(), 5);
        if (msg != nullptr) rd_kafka_message_destroy(msg);
      }
      rd_kafka_consumer_close(m.rk.get());
    });
  }
  const Clock::time_point t0 = Clock::now();
  for (auto& m : group_members) m->t0 = t0;
  start.arrive_and_wait();
  for (std::thread& t : threads) t.join();
  RebalanceResult r;
  for (auto& m : group_members) {
    r.all_first_record_ms = std::max(r.all_first_record_ms, m->first_record_ms);
    r.all_assigned_ms = std::max(r.all_assigned_ms, m->assigned_ms);
  }
  return r;
}

std::string Samples(const std::vector<double>& v, const char* format) {
  std::string out;
  for (double x : v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, format, x);
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return out;
}

double Best(const std::vector<double>& v, bool highest) {
  return highest ? *std::max_element(v.begin(), v.end())
                 : *std::min_element(v.begin(), v.end());
}

}  // namespace
}  // namespace exactly::bench

int main(int argc, char** argv) {
  using namespace exactly::bench;  // NOLINT
  Args args(argc, argv);
  const int64_t records = args.Int("--records", 1000000);
  const int partitions = static_cast<int>(args.Int("--partitions", 32));
  const int rounds = std::max(1, static_cast<int>(args.Int("--rounds", 5)));
  const int rebalance_rounds =
      std::max(1, static_cast<int>(args.Int("--rebalance-rounds", 5)));
  const int delay_ms = static_cast<int>(args.Int("--delay-ms", 300));
  std::printf(
      "group_bench: librdkafka %s, %zu-byte records, %lld records over %d "
      "partitions, group of 2 consumers, %d rounds (interleaved); rebalance of "
      "4 members, initial rebalance delay %d ms, %d rounds\n",
      rd_kafka_version_str(), kValueBytes, static_cast<long long>(records),
      partitions, rounds, delay_ms, rebalance_rounds);
  std::fflush(stdout);

  // 1. Consume throughput.
  Cluster bundled =
      StartBundled("bundled broker, in memory", partitions, delay_ms);
  Cluster mock = StartMock(partitions);
  for (const Cluster* c : {&bundled, &mock}) {
    Stopwatch fill;
    Fill(c->bootstrap, partitions, records);
    const int64_t held = Retained(c->bootstrap, partitions);
    std::printf("filled %-28s %lld records in %.1f s (untimed)\n",
                c->name.c_str(), static_cast<long long>(held), fill.Seconds());
    std::fflush(stdout);
    if (held != records) {
      Die(c->name + " holds " + std::to_string(held) + " of " +
          std::to_string(records) +
          " records: raise --partitions (the mock keeps 5 MiB per partition)");
    }
  }
  std::vector<double> b_rate, m_rate, b_wall, m_wall, b_form, m_form, b_cpu,
      m_cpu;
  for (int r = 0; r < rounds; ++r) {
    // Alternate which cluster goes first: the machine is shared and noisy.
    const bool bundled_first = r % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      const bool is_bundled = (k == 0) == bundled_first;
      const Cluster& c = is_bundled ? bundled : mock;
      ConsumeResult res = ConsumeWithGroup(
          c.bootstrap, "throughput-" + std::to_string(r), records, 2,
          /*exact=*/is_bundled);
      (is_bundled ? b_rate : m_rate).push_back(res.records_per_second);
      (is_bundled ? b_wall : m_wall).push_back(res.wall_seconds);
      (is_bundled ? b_form : m_form).push_back(res.formation_seconds);
      (is_bundled ? b_cpu : m_cpu).push_back(res.cpu_us_per_record);
    }
    std::printf("round %d: bundled %.0f rec/s, mock %.0f rec/s\n", r + 1,
                b_rate.back(), m_rate.back());
    std::fflush(stdout);
  }
  bundled.stop();
  mock.stop();

  const double b_med = Median(b_rate), m_med = Median(m_rate);
  // The ratio: the median of the per-round ratios (runs of one round paired).
  const double b_ratio = MedianOfRatios(b_rate, m_rate);
  std::printf(
      "\nconsume, group of 2, %lld records (first record to last; wall is "
      "from subscribe)\n",
      static_cast<long long>(records));
  std::printf("%-28s %14s %14s %8s %10s %12s\n", "cluster", "median rec/s",
              "best rec/s", "ratio", "wall s", "1st rec s");
  std::printf("%-28s %14.0f %14.0f %7.2fx %10.2f %12.2f\n",
              "bundled broker, in memory", b_med, Best(b_rate, true), b_ratio,
              Median(b_wall), Median(b_form));
  std::printf("%-28s %14.0f %14.0f %7.2fx %10.2f %12.2f\n",
              "librdkafka mock cluster", m_med, Best(m_rate, true), 1.0,
              Median(m_wall), Median(m_form));
  std::printf("  samples bundled: %s\n  samples mock:    %s\n",
              Samples(b_rate, "%.0f").c_str(), Samples(m_rate, "%.0f").c_str());
  std::printf(
      "  process CPU per record (consumers + broker threads, median): bundled "
      "%.2f us, mock %.2f us\n",
      Median(b_cpu), Median(m_cpu));

  // 2. Rebalance of 4 members. Small topics, filled once per cluster.
  const int kMembers = 4;
  const int64_t kSmall = 4000;
  struct RebalanceRow {
    std::string name;
    std::vector<double> first_record, assigned;
  };
  std::vector<RebalanceRow> rows;
  // `committed`: the group has offsets committed (0 for every partition)
  // before its members start, as a group that restarts has; otherwise the
  // group is new and each member resets its offsets (auto.offset.reset), which
  // librdkafka 2.0 starts only after a 100 ms timer (retry.backoff.ms), on any
  // broker.
  auto measure = [&](Cluster c, const std::string& name, int n_rounds,
                     bool committed) {
    Fill(c.bootstrap, partitions, kSmall);
    RebalanceRow row{name, {}, {}};
    for (int r = 0; r < n_rounds; ++r) {
      const std::string group = "rebalance-" + std::to_string(r);
      if (committed) CommitZero(c.bootstrap, group, partitions);
      RebalanceResult res = Rebalance(c.bootstrap, group, kMembers);
      row.first_record.push_back(res.all_first_record_ms);
      row.assigned.push_back(res.all_assigned_ms);
    }
    c.stop();
    rows.push_back(row);
  };
  const std::string delay = "delay " + std::to_string(delay_ms) + " ms";
  measure(StartBundled("", partitions, delay_ms), "bundled, " + delay,
          rebalance_rounds, true);
  measure(StartBundled("", partitions, delay_ms),
          "bundled, " + delay + ", new group", std::min(rebalance_rounds, 3),
          false);
  measure(StartBundled("", partitions, 0), "bundled, delay 0",
          std::min(rebalance_rounds, 3), true);
  // (A new group: on the mock, a commit from outside the group holds the
  // next join for a session timeout.)
  measure(StartMock(partitions), "mock cluster, new group",
          std::min(rebalance_rounds, 2), false);

  std::printf(
      "\nrebalance, %d members subscribing together: ms until every member "
      "has its assignment / its first record\n",
      kMembers);
  std::printf("%-34s %14s %18s   %s\n", "cluster", "assigned (med)",
              "first record (med)", "first-record samples");
  for (const RebalanceRow& row : rows) {
    std::printf("%-34s %14.0f %18.0f   %s\n", row.name.c_str(),
                Median(row.assigned), Median(row.first_record),
                Samples(row.first_record, "%.0f").c_str());
  }
  const double limit_ms = 2.2 * delay_ms + 50;
  std::printf(
      "target (first row): <= 2.2 x %d + 50 = %.0f ms (Kafka's schedule, two "
      "delays, + 0.2 x delay + 50); the other rows are "
      "context (a new group adds librdkafka's 100 ms offset-reset timer; the "
      "mock holds every first join 3000 ms)\n",
      delay_ms, limit_ms);

  Verdict v;
  v.Check("consume, group of 2: bundled >= 1.0x mock", b_ratio, 1.0);
  v.CheckAtMost("rebalance of 4 <= 2.2 x delay + 50 ms (ms)",
                Median(rows[0].first_record), limit_ms);
  return v.Print();
}
