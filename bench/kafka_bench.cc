// The bundled broker against Apache Kafka (one broker, KRaft, run by
// scripts/kafka.sh), on the same machine, with the same client code in the
// same run: librdkafka, 100-byte records, 3 partitions. Both brokers run as
// processes of their own (the exactly-broker binary, in memory and with
// --data-dir; Kafka's JVM with its own start script's flags, heap 1 GiB,
// Kafka's default segment size, no fsync per write: Kafka's defaults).
//
//   kafka_bench [--kafka-script scripts/kafka.sh] [--broker-bin PATH]
//               [--rounds R=3] [--produce-records N=1000000]
//               [--consume-records N=120000] [--consume-passes P=5]
//               [--txn-seconds S=5] [--memory-records N=1000000]
//               [--broker-flag FLAG]  (one more flag for the bundled broker's
//               throughput runs, e.g. --frame_huge_pages=false)
//   (--rounds 0: only the start and memory measurements)
//
// Each round creates fresh topics on the three targets and runs, in an order
// that rotates from round to round: produce (idempotent, acks=all), consume
// (an assign-only consumer from the first record to the last) and
// transactions (a transactional producer committing every 100 ms). Each
// verdict is the median of the per-round ratios to Kafka. Before the rounds
// every target gets an untimed warm-up (the JVM compiles its hot paths).
// Then: start to first acknowledged record (exactly-broker binary vs Kafka's
// JVM on formatted storage), and resident memory with the same records
// retained (each a fresh process).
//
// Targets (issue 17): bundled >= 1.0x Kafka throughput with --data-dir,
// >= 1.5x in memory; first ack >= 50x sooner; RSS <= 0.5x Kafka's.
// Exits 77 (after one line saying why) if Kafka cannot be had here.
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_producer.h"

namespace exactly::bench {
namespace {

constexpr int kPartitions = 3;
constexpr size_t kValueBytes = 100;
constexpr int kCommitMs = 100;

// Kafka's own defaults where the harness's test settings differ for tests'
// sake (segments of 1 GiB with 10 MiB indexes).
const std::vector<std::string> kKafkaSettings = {
    "--heap", "1g",
    "--set",  "log.segment.bytes=1073741824",
    "--set",  "log.index.size.max.bytes=10485760",
};

// Runs `command`; its stdout, and its exit status in *status.
std::string Capture(const std::string& command, int* status) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) Die("popen " + command);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  int st = pclose(pipe);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string KafkaArgs() {
  std::string out;
  for (const std::string& a : kKafkaSettings) out += " '" + a + "'";
  return out;
}

// Stops the Kafka cluster in `dir` and removes it.
void DestroyKafka(const std::string& script, const std::string& dir) {
  int status = 0;
  Capture("'" + script + "' destroy '" + dir + "' 2>&1", &status);
}

// The 1-broker Kafka cluster of the whole run.
struct KafkaTarget {
  std::string script, dir, bootstrap;
  int stop_on_die = 0;  // its key in StopsOnDie
  void Stop() {
    if (dir.empty()) return;
    StopsOnDie::Remove(stop_on_die);
    DestroyKafka(script, dir);
    dir.clear();
  }
  ~KafkaTarget() { Stop(); }
};

// Creates `topic` (kPartitions) through `client`'s Admin API.
void CreateTopicWith(rd_kafka_t* client, const std::string& topic) {
  char err[512];
  rd_kafka_NewTopic_t* t =
      rd_kafka_NewTopic_new(topic.c_str(), kPartitions, -1, err, sizeof err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(client);
  rd_kafka_CreateTopics(client, &t, 1, nullptr, q);
  rd_kafka_event_t* e = rd_kafka_queue_poll(q, 60000);
  std::string why;
  if (e == nullptr) {
    why = "timed out";
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(
            rd_kafka_event_CreateTopics_result(e), &n);
    for (size_t i = 0; i < n; ++i) {
      if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR)
        why = rd_kafka_topic_result_error_string(results[i]);
    }
    rd_kafka_event_destroy(e);
  }
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(t);
  if (!why.empty()) Die("create topic " + topic + ": " + why);
}

void CreateTopic(const std::string& bootstrap, const std::string& topic) {
  RdKafka admin =
      NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}});
  CreateTopicWith(admin.get(), topic);
}

// Records a second from the first record read to the last, over `passes`
// fresh assign-only consumers (as broker_bench measures it).
double ConsumeRate(const std::string& bootstrap, const std::string& topic,
                   int64_t n, int passes) {
  double seconds = 0;
  for (int pass = 0; pass < passes; ++pass) {
    RdKafka c = AssignedConsumer(bootstrap, topic, kPartitions,
                                 {{"group.id", "kafka-bench"}});
    int64_t got = 0;
    std::optional<Stopwatch> since_first;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (got < n && std::chrono::steady_clock::now() < deadline) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(c.get(), 100);
      if (m == nullptr) continue;
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && got++ == 0)
        since_first.emplace();
      rd_kafka_message_destroy(m);
    }
    if (got < n)
      Die("consumer read " + std::to_string(got) + " of " + std::to_string(n));
    seconds += since_first->Seconds();
    rd_kafka_consumer_close(c.get());
  }
  return static_cast<double>((n - 1) * passes) / seconds;
}

void Fill(const std::string& bootstrap, const std::string& topic, int64_t n) {
  auto props = ProducerTuning();
  props["bootstrap.servers"] = bootstrap;
  RdKafka p = NewClient(RD_KAFKA_PRODUCER, props);
  const std::string value(kValueBytes, 'c');
  for (int64_t i = 0; i < n; ++i) {
    ProduceOrDie(p.get(), topic, static_cast<int32_t>(i % kPartitions), value);
    if (i % 1000 == 999) rd_kafka_poll(p.get(), 0);
  }
  if (rd_kafka_flush(p.get(), 120000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die("fill flush");
}

void DieOn(rd_kafka_error_t* e, const char* what) {
  if (e == nullptr) return;
  std::string why = std::string(what) + ": " + rd_kafka_error_string(e);
  rd_kafka_error_destroy(e);
  Die(why);
}

// Cores kept busy while one measurement ran (CPU seconds over wall seconds):
// the broker's process, and this one (the client: librdkafka's threads). On 2
// cores they show which side limits a rate.
struct Busy {
  double broker = 0;
  double client = 0;
};

// Runs `rate()` and returns what it returns, noting in *busy the cores the
// broker `pid` and this process used meanwhile.
double Measured(pid_t pid, Busy* busy, const std::function<double()>& rate) {
  const double broker_before = PidCpuSeconds(pid);
  const double client_before = ProcessCpuSeconds();
  Stopwatch wall;
  const double result = rate();
  const double seconds = wall.Seconds();
  busy->broker = (PidCpuSeconds(pid) - broker_before) / seconds;
  busy->client = (ProcessCpuSeconds() - client_before) / seconds;
  return result;
}

// Where a transactional run's time went: the kCommitMs windows of producing
// (the loop enqueues as fast as librdkafka takes records) and the calls to
// commit_transaction (the drain of what is still in flight, then EndTxn). The
// broker shortens only the second.
struct TxnTimes {
  int commits = 0;
  double commit_seconds = 0;
  int64_t records = 0;
};

// Records committed a second by a transactional producer committing every
// kCommitMs for `seconds` (as txn_bench measures it); *times, when given,
// gets where the time went.
double TransactionalRate(const std::string& bootstrap, const std::string& topic,
                         const std::string& txn_id, double seconds,
                         TxnTimes* times = nullptr) {
  RdKafka p = NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                            {"enable.idempotence", "true"},
                                            {"transactional.id", txn_id},
                                            {"linger.ms", "5"}});
  DieOn(rd_kafka_init_transactions(p.get(), 60000), "init_transactions");
  const std::string value(kValueBytes, 't');
  int64_t sent = 0;
  Stopwatch total;
  while (total.Seconds() < seconds) {
    DieOn(rd_kafka_begin_transaction(p.get()), "begin_transaction");
    Stopwatch slice;
    while (slice.Seconds() * 1000 < kCommitMs) {
      for (int i = 0; i < 1000; ++i) {
        ProduceOrDie(p.get(), topic, static_cast<int32_t>(sent++ % kPartitions),
                     value);
      }
      rd_kafka_poll(p.get(), 0);
    }
    Stopwatch commit;
    DieOn(rd_kafka_commit_transaction(p.get(), 60000), "commit_transaction");
    if (times != nullptr) {
      ++times->commits;
      times->commit_seconds += commit.Seconds();
    }
  }
  if (times != nullptr) times->records = sent;
  return static_cast<double>(sent) / total.Seconds();
}

// Creates a topic and produces one record to it (idempotent, acks=all) until
// it is acknowledged; librdkafka keeps reconnecting while the broker starts.
// The topic is created, then asked for, so that the timing measures the
// broker and not librdkafka's 1 s topic scan: left to auto-creation, the
// Metadata request that creates the topic is answered
// UNKNOWN_TOPIC_OR_PARTITION by both brokers (Kafka's controller creates it
// after the answer); and a topic a connected producer first sees waits for
// that scan before its metadata is requested.
void FirstAck(const std::string& bootstrap) {
  auto props = ProducerTuning();
  props["bootstrap.servers"] = bootstrap;
  props["reconnect.backoff.ms"] = "1";
  props["reconnect.backoff.max.ms"] = "10";
  props["log_level"] = "0";
  RdKafka p = NewClient(RD_KAFKA_PRODUCER, props);
  CreateTopicWith(p.get(), "first");
  rd_kafka_topic_t* topic = rd_kafka_topic_new(p.get(), "first", nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(p.get(), 0, topic, &metadata, 60000) ==
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(metadata);
  }
  rd_kafka_topic_destroy(topic);
  ProduceOrDie(p.get(), "first", 0, "x");
  if (rd_kafka_flush(p.get(), 120000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die("first ack");
}

pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0)
    Die("cannot start " + args[0]);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

void StopPid(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

struct JvmRun {
  double first_ack_ms = 0;
  double rss_bytes = 0;  // after `memory_records` were produced (0: not asked)
};

// Formats a fresh 1-broker cluster, starts its JVM, and times the first ack;
// with memory_records > 0 then produces them and reads the JVM's RSS.
JvmRun KafkaJvmRun(const std::string& script, const std::string& dir,
                   int64_t memory_records) {
  int status = 0;
  std::vector<std::string> lines = Lines(Capture(
      "'" + script + "' prepare --brokers 1 --dir '" + dir + "'" + KafkaArgs(),
      &status));
  if (status != 0 || lines.size() < 2) Die("scripts/kafka.sh prepare failed");
  const std::string bootstrap = lines[0].substr(lines[0].find('=') + 1);
  std::vector<std::string> command(lines.begin() + 1, lines.end());
  JvmRun run;
  Stopwatch watch;
  pid_t pid = Spawn(command, dir + "/first-ack.log");
  FirstAck(bootstrap);
  run.first_ack_ms = watch.Seconds() * 1000;
  if (memory_records > 0) {
    CreateTopic(bootstrap, "memory");
    Fill(bootstrap, "memory", memory_records);
    run.rss_bytes = static_cast<double>(RssBytes(pid));
  }
  StopPid(pid);
  return run;
}

double BinaryFirstAckMs(const std::string& binary) {
  Stopwatch watch;
  ChildProcess child = SpawnBroker(binary, {"--port", "0"});
  FirstAck(child.bootstrap);
  return watch.Seconds() * 1000;
}

}  // namespace
}  // namespace exactly::bench

int main(int argc, char** argv) {
  using namespace exactly::bench;  // NOLINT
  Args args(argc, argv);
  const int rounds = static_cast<int>(args.Int("--rounds", 3));
  const int64_t produce_n = args.Int("--produce-records", 1000000);
  const int64_t consume_n = args.Int("--consume-records", 120000);
  const int passes = static_cast<int>(args.Int("--consume-passes", 5));
  const double txn_seconds = static_cast<double>(args.Int("--txn-seconds", 5));
  const int64_t memory_n = args.Int("--memory-records", 1000000);
  const std::string binary =
      args.Str("--broker-bin", DefaultBrokerBinary(argv[0]));
  const std::string script = args.Str("--kafka-script", "scripts/kafka.sh");
  const std::string broker_flag = args.Str("--broker-flag", "");

  TempDir tmp;
  KafkaTarget kafka;
  kafka.script = script;
  {
    int status = 0;
    std::string out =
        Capture("'" + script + "' start --brokers 1 --dir '" + tmp.path() +
                    "/kafka'" + KafkaArgs() + " 2>&1",
                &status);
    if (status == 77) {
      std::printf("kafka_bench SKIPPED: Apache Kafka cannot be had here: %s\n",
                  out.c_str());
      return 77;
    }
    if (status != 0) Die("scripts/kafka.sh start failed: " + out);
    kafka.dir = tmp.path() + "/kafka";
    kafka.stop_on_die = StopsOnDie::Add(
        [script, dir = kafka.dir] { DestroyKafka(script, dir); });
    for (const std::string& line : Lines(out)) {
      if (line.rfind("bootstrap.servers=", 0) == 0)
        kafka.bootstrap = line.substr(18);
    }
  }
  int status = 0;
  const std::string version =
      Lines(Capture("'" + script + "' fetch 2>/dev/null", &status)).back();
  std::vector<std::string> memory_args = {"--port", "0"};
  std::vector<std::string> disk_args = {"--port", "0", "--data-dir",
                                        tmp.path() + "/bundled"};
  if (!broker_flag.empty()) {
    memory_args.push_back(broker_flag);
    disk_args.push_back(broker_flag);
  }
  ChildProcess memory = SpawnBroker(binary, memory_args);
  ChildProcess disk = SpawnBroker(binary, disk_args);
  struct Target {
    std::string name, bootstrap;
    pid_t pid;
  };
  pid_t kafka_pid = -1;
  {
    std::ifstream pid_file(kafka.dir + "/node-1/pid");
    pid_file >> kafka_pid;
  }
  if (kafka_pid <= 0) Die("no pid in " + kafka.dir + "/node-1/pid");
  const std::vector<Target> targets = {
      {"Apache Kafka (1 broker, JVM)", kafka.bootstrap, kafka_pid},
      {"bundled broker, in memory", memory.bootstrap, memory.pid},
      {"bundled broker, --data-dir", disk.bootstrap, disk.pid},
  };
  std::printf(
      "kafka_bench: librdkafka %s, %zu-byte records, %d partitions, median of "
      "%d rounds; Kafka from %s%s%s\n",
      rd_kafka_version_str(), kValueBytes, kPartitions, rounds, version.c_str(),
      broker_flag.empty() ? "" : "; bundled broker with ", broker_flag.c_str());
  for (const Target& t : targets) {  // warm-up, untimed
    if (rounds == 0) break;
    CreateTopic(t.bootstrap, "warmup");
    RawProduceRate(t.bootstrap, "warmup", 200000, kPartitions, kValueBytes);
    TransactionalRate(t.bootstrap, "warmup", "warmup", 1);
  }
  const size_t n = targets.size();
  std::vector<std::vector<double>> produce(n), consume(n), txn(n);
  // Per target and phase (produce, consume, txn), each round's busy cores.
  std::vector<std::array<std::vector<Busy>, 3>> busy(n);
  std::vector<std::vector<TxnTimes>> txn_times(n);
  auto measured = [&](size_t i, int phase, const std::function<double()>& fn) {
    Busy b;
    const double rate = Measured(targets[i].pid, &b, fn);
    busy[i][phase].push_back(b);
    return rate;
  };
  for (int r = 0; r < rounds; ++r) {
    const std::string suffix = "-" + std::to_string(r);
    auto rotated = [&](const std::function<void(size_t)>& fn) {
      for (size_t k = 0; k < n; ++k) fn((k + static_cast<size_t>(r)) % n);
    };
    for (const Target& t : targets) {
      for (const char* base : {"produce", "consume", "txn"})
        CreateTopic(t.bootstrap, base + suffix);
    }
    rotated([&](size_t i) {
      produce[i].push_back(measured(i, 0, [&] {
        return RawProduceRate(targets[i].bootstrap, "produce" + suffix,
                              produce_n, kPartitions, kValueBytes);
      }));
    });
    rotated([&](size_t i) {
      Fill(targets[i].bootstrap, "consume" + suffix, consume_n);
    });
    rotated([&](size_t i) {
      consume[i].push_back(measured(i, 1, [&] {
        return ConsumeRate(targets[i].bootstrap, "consume" + suffix, consume_n,
                           passes);
      }));
    });
    rotated([&](size_t i) {
      TxnTimes times;
      txn[i].push_back(measured(i, 2, [&] {
        return TransactionalRate(targets[i].bootstrap, "txn" + suffix,
                                 "bench" + suffix, txn_seconds, &times);
      }));
      txn_times[i].push_back(times);
    });
    std::printf("round %d, produce / consume / transactional rec/s:", r + 1);
    for (size_t i = 0; i < n; ++i) {
      std::printf(" %s %.0f / %.0f / %.0f%s", targets[i].name.c_str(),
                  produce[i].back(), consume[i].back(), txn[i].back(),
                  i + 1 == n ? "\n" : ";");
    }
    std::fflush(stdout);
  }
  std::printf(
      "\n%-30s %14s %8s %14s %8s %14s %8s   (ratio: median of the per-round "
      "ratios to Kafka)\n",
      "target", "produce rec/s", "ratio", "consume rec/s", "ratio", "txn rec/s",
      "ratio");
  std::vector<double> pr(n), cr(n), tr(n);
  for (size_t i = 0; i < n && rounds > 0; ++i) {
    pr[i] = MedianOfRatios(produce[i], produce[0]);
    cr[i] = MedianOfRatios(consume[i], consume[0]);
    tr[i] = MedianOfRatios(txn[i], txn[0]);
    std::printf("%-30s %14.0f %7.2fx %14.0f %7.2fx %14.0f %7.2fx\n",
                targets[i].name.c_str(), Median(produce[i]), pr[i],
                Median(consume[i]), cr[i], Median(txn[i]), tr[i]);
  }
  std::printf(
      "\n%-30s %19s %19s %19s   (cores busy, broker / client: median of the "
      "rounds)\n",
      "target", "produce", "consume", "txn");
  for (size_t i = 0; i < n && rounds > 0; ++i) {
    std::printf("%-30s", targets[i].name.c_str());
    for (const std::vector<Busy>& phase : busy[i]) {
      std::vector<double> broker, client;
      for (const Busy& b : phase) {
        broker.push_back(b.broker);
        client.push_back(b.client);
      }
      std::printf("        %4.2f / %4.2f", Median(broker), Median(client));
    }
    std::printf("\n");
  }
  std::printf("\n%-30s %19s %19s   (transactions: median of the rounds)\n",
              "target", "records per commit", "ms per commit");
  for (size_t i = 0; i < n && rounds > 0; ++i) {
    std::vector<double> per_commit, commit_ms;
    for (const TxnTimes& t : txn_times[i]) {
      if (t.commits == 0) continue;
      per_commit.push_back(static_cast<double>(t.records) / t.commits);
      commit_ms.push_back(t.commit_seconds * 1000 / t.commits);
    }
    std::printf("%-30s %19.0f %19.1f\n", targets[i].name.c_str(),
                Median(per_commit), Median(commit_ms));
  }
  memory.Stop();
  disk.Stop();
  kafka.Stop();  // frees the CPU for the start and memory runs

  Verdict v;
  if (rounds > 0) {  // --rounds 0: start and memory only
    v.Check("in memory: produce >= 1.5x Kafka", pr[1], 1.5);
    v.Check("in memory: consume >= 1.5x Kafka", cr[1], 1.5);
    v.Check("in memory: transactions >= 1.5x Kafka", tr[1], 1.5);
    v.Check("data dir:  produce >= 1.0x Kafka", pr[2], 1.0);
    v.Check("data dir:  consume >= 1.0x Kafka", cr[2], 1.0);
    v.Check("data dir:  transactions >= 1.0x Kafka", tr[2], 1.0);
  }

  std::vector<double> binary_ms, jvm_ms;
  double jvm_rss = 0;
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 3; ++k) binary_ms.push_back(BinaryFirstAckMs(binary));
    JvmRun run = KafkaJvmRun(script, tmp.path() + "/jvm-" + std::to_string(r),
                             r == 0 ? memory_n : 0);
    jvm_ms.push_back(run.first_ack_ms);
    if (r == 0) jvm_rss = run.rss_bytes;
  }
  const double start_ratio = Median(jvm_ms) / Median(binary_ms);
  std::printf(
      "\nstart to first acknowledged record (median): exactly-broker binary "
      "%.1f "
      "ms, Kafka JVM %.0f ms (storage formatted beforehand): %.0fx sooner\n",
      Median(binary_ms), Median(jvm_ms), start_ratio);
  v.Check("first ack >= 50x sooner than Kafka's", start_ratio, 50);

  MemoryResult mem = MeasureBinaryMemory(binary, memory_n, kValueBytes);
  const double rss_ratio = mem.rss_bytes / jvm_rss;
  std::printf(
      "memory with %lld records retained (%.1f MB of records): exactly-broker "
      "RSS %.1f MB, Kafka JVM RSS %.1f MB (heap 1 GiB; its log is in the page "
      "cache, not counted): %.2fx\n",
      static_cast<long long>(memory_n), mem.retained_bytes / 1e6,
      mem.rss_bytes / 1e6, jvm_rss / 1e6, rss_ratio);
  v.CheckAtMost("RSS <= 0.5x Kafka's", rss_ratio, 0.5);
  return v.Print();
}
