// Shared pieces of the benchmarks: librdkafka clients, timing, child broker
// processes, and the verdict lines that compare a measured ratio with its
// target.
#ifndef EXACTLY_BENCH_BENCH_UTIL_H_
#define EXACTLY_BENCH_BENCH_UTIL_H_

#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace exactly::bench {

// What Die() ends before the process exits. std::exit runs no destructors of
// locals, so without this the brokers and Kafka clusters a benchmark started
// would outlive it. Their owners add a stop when they start one and remove it
// once they have stopped it themselves.
class StopsOnDie {
 public:
  static int Add(std::function<void()> stop) {
    std::lock_guard<std::mutex> lock(mu());
    stops()[++next()] = std::move(stop);
    return next();
  }
  static void Remove(int key) {
    std::lock_guard<std::mutex> lock(mu());
    stops().erase(key);
  }
  // Runs and forgets every stop, the latest first.
  static void RunAll() {
    std::map<int, std::function<void()>> taken;
    {
      std::lock_guard<std::mutex> lock(mu());
      taken.swap(stops());
    }
    for (auto it = taken.rbegin(); it != taken.rend(); ++it) it->second();
  }

 private:
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::map<int, std::function<void()>>& stops() {
    static std::map<int, std::function<void()>> s;
    return s;
  }
  static int& next() {
    static int n = 0;
    return n;
  }
};

[[noreturn]] inline void Die(const std::string& why) {
  std::fprintf(stderr, "bench: %s\n", why.c_str());
  StopsOnDie::RunAll();
  std::exit(1);
}

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// CPU time of the whole process (client and in-process broker threads): on a
// shared machine it is steadier than a rate.
inline double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU time another process (a broker) has used so far: utime + stime of
// /proc/PID/stat; -1 if it cannot be read.
inline double PidCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // Fields after the command name, which is in parentheses and may hold
  // spaces: state is field 3, utime 14 and stime 15.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The median of a[i] / b[i]: runs of one round are paired, so that a machine
// whose speed drifts between rounds shifts both sides of each ratio alike.
inline double MedianOfRatios(const std::vector<double>& a,
                             const std::vector<double>& b) {
  std::vector<double> ratios;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (b[i] > 0) ratios.push_back(a[i] / b[i]);
  }
  return Median(ratios);
}

inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i =
      static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using RdKafka = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

inline RdKafka NewClient(rd_kafka_type_t type,
                         const std::map<std::string, std::string>& props,
                         void (*dr)(rd_kafka_t*, const rd_kafka_message_t*,
                                    void*) = nullptr,
                         void* opaque = nullptr) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      Die(k + ": " + err);
    }
  }
  if (dr != nullptr) rd_kafka_conf_set_dr_msg_cb(conf, dr);
  if (opaque != nullptr) rd_kafka_conf_set_opaque(conf, opaque);
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) Die(err);
  return RdKafka(rk);
}

// librdkafka's mock cluster keeps the last 5 MiB of each partition and drops
// older batches. Benchmarks give the bundled broker's topics the same bound
// (`retention.bytes`), so that both hold the same amount of memory.
inline constexpr int64_t kMockRetentionBytes = int64_t{5} << 20;

// Topic configs bounding each partition to `retention_bytes` (0: none, keep
// everything).
inline std::map<std::string, std::string> RetentionConfigs(
    int64_t retention_bytes) {
  if (retention_bytes <= 0) return {};
  return {{"retention.bytes", std::to_string(retention_bytes)}};
}

// A consumer (no auto-commit, no EOF events, plus `props`) assigned every
// partition of `topic` from the beginning.
inline RdKafka AssignedConsumer(const std::string& bootstrap,
                                const std::string& topic, int partitions,
                                std::map<std::string, std::string> props) {
  props["bootstrap.servers"] = bootstrap;
  props["enable.auto.commit"] = "false";
  props["enable.partition.eof"] = "false";
  RdKafka c = NewClient(RD_KAFKA_CONSUMER, props);
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(c.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  return c;
}

inline void ProduceOrDie(rd_kafka_t* p, const std::string& topic,
                         int32_t partition, const std::string& value) {
  for (;;) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        p, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) Die(rd_kafka_err2str(err));
    rd_kafka_poll(p, 1);
  }
}

// --name value command-line options.
class Args {
 public:
  Args(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; i += 2) values_[argv[i]] = argv[i + 1];
  }
  int64_t Int(const std::string& name, int64_t fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : std::atoll(it->second.c_str());
  }
  std::string Str(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }

 private:
  std::map<std::string, std::string> values_;
};

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "exactly-bench-XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) == nullptr) Die("mkdtemp");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The exactly-broker binary next to the build tree's bench/ folder.
inline std::string DefaultBrokerBinary(const char* argv0) {
  std::filesystem::path self = std::filesystem::absolute(argv0);
  return (self.parent_path().parent_path() / "broker-stub" / "exactly-broker")
      .string();
}

// A child exactly-broker process, started and waited for
// ("bootstrap.servers=..." line).
// SIGTERM, then waits for it to exit.
inline void TerminateAndReap(pid_t pid) {
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
}

struct ChildProcess {
  pid_t pid = -1;
  std::string bootstrap;
  int stop_on_die = 0;  // its key in StopsOnDie
  void Stop() {
    if (pid > 0) {
      StopsOnDie::Remove(stop_on_die);
      TerminateAndReap(pid);
      pid = -1;
    }
  }
  ~ChildProcess() { Stop(); }
};

inline ChildProcess SpawnBroker(const std::string& binary,
                                std::vector<std::string> args) {
  int out[2];
  if (pipe(out) != 0) Die("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  std::vector<std::string> argv_strings = {binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  ChildProcess child;
  if (posix_spawn(&child.pid, binary.c_str(), &actions, nullptr, argv.data(),
                  environ) != 0) {
    Die("cannot start " + binary);
  }
  child.stop_on_die =
      StopsOnDie::Add([pid = child.pid] { TerminateAndReap(pid); });
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  close(out[0]);
  const std::string prefix = "bootstrap.servers=";
  if (line.rfind(prefix, 0) != 0) Die("broker did not start: " + line);
  child.bootstrap = line.substr(prefix.size());
  return child;
}

inline int64_t RssBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      int64_t kb = 0;
      status >> kb;
      return kb * 1024;
    }
  }
  return -1;
}

struct MemoryResult {
  int64_t records = 0;
  double retained_bytes = 0;
  double rss_bytes = 0;
};

// Starts the exactly-broker binary (in memory), produces `records` values of
// `value_bytes` each, and reads its resident memory. The bytes retained are the
// records' v2 encoding: value + 10 bytes of record framing for a keyless record
// of this size (batch headers, 61 bytes per thousands of records, are left out,
// which makes the limit slightly stricter).
inline MemoryResult MeasureBinaryMemory(const std::string& binary,
                                        int64_t records, size_t value_bytes) {
  ChildProcess child =
      SpawnBroker(binary, {"--port", "0", "--default-partitions", "3"});
  RdKafka p = NewClient(RD_KAFKA_PRODUCER,
                        {{"bootstrap.servers", child.bootstrap},
                         {"enable.idempotence", "true"},
                         {"linger.ms", "5"},
                         {"queue.buffering.max.messages", "1000000"}});
  std::string value(value_bytes, 'm');
  for (int64_t i = 0; i < records; ++i)
    ProduceOrDie(p.get(), "memory", i % 3, value);
  if (rd_kafka_flush(p.get(), 120000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die("memory flush");
  MemoryResult r;
  r.records = records;
  r.retained_bytes =
      static_cast<double>(records) * static_cast<double>(value_bytes + 10);
  r.rss_bytes = static_cast<double>(RssBytes(child.pid));
  child.Stop();
  return r;
}

// Lines "MET"/"MISSED" for each target; Print() summarises. A benchmark
// reports, it does not fail the build: the process exits 0 either way.
class Verdict {
 public:
  void Check(const std::string& what, double measured, double at_least) {
    Line(what, measured, measured >= at_least);
  }
  void CheckAtMost(const std::string& what, double measured, double at_most) {
    Line(what, measured, measured <= at_most);
  }
  int Print() const {
    std::printf("\n");
    for (const std::string& l : lines_) std::printf("%s\n", l.c_str());
    return 0;
  }

 private:
  void Line(const std::string& what, double measured, bool met) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-6s %-45s measured %.2f",
                  met ? "MET" : "MISSED", what.c_str(), measured);
    lines_.push_back(buf);
  }
  std::vector<std::string> lines_;
};

}  // namespace exactly::bench

#endif  // EXACTLY_BENCH_BENCH_UTIL_H_
