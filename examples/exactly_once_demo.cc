// The exactly-once demo: a producer is killed with SIGKILL at random moments,
// restarted each time, and still every record reaches Kafka exactly once.
// Beside it, the same run with a plain producer shows what is usually lost or
// duplicated.
//
//   exactly_once_demo [--records N] [--kills K] [--seconds S] [--seed X]
//                     [--partitions P] [--keep]
//                     [--bootstrap-servers B [--mid-run-command CMD]]
//
// It starts the bundled broker in this process (with a data dir), and makes
// it answer produce requests after 30 ms, as a cluster across a network
// would, and drop one produce response in 10 after appending the batch, as a
// network or broker hiccup would. Then, for each kind of producer, it starts
// a producer process that sends records "0".."N-1" at N/S records a second,
// kills it K times at random moments (the same moments for both kinds) and
// restarts it; the last process runs to the end. Finally a read_committed
// consumer counts what each topic holds.
//
// With --bootstrap-servers the demo runs against that cluster (Apache Kafka:
// scripts/demo.sh --kafka) instead, whose faults are real: no responses are
// dropped on purpose, and --mid-run-command (run by the shell in the middle
// of each producer's run, e.g. to SIGKILL a broker and start it again) adds
// what the cluster should survive.
//
//   exactly-once: exactly::SpooledProducer with a transactional.id. Send()
//     returns once the record is on local disk; the spool stores the
//     application's position (the cursor) with it, so a restarted process
//     knows where to resume; records reach Kafka in transactions, with
//     idempotence, so retries and restarts add no copies.
//   plain: librdkafka with acks=1 and enable.idempotence=false, resuming from
//     a progress file, as many applications are written.
//
// The exit status is 0 when the exactly-once run has nothing missing and
// nothing duplicated; the plain run's numbers are for comparison only.
// The children are this same binary, run with --child.
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "exactly/broker/broker.h"
#include "exactly/exactly.h"
#include "exactly/spool.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The spooled producer hands records over in chunks this big: one SendBatch,
// one disk sync. The plain one produces them one by one.
constexpr int kChunk = 50;
// Both producers batch for up to this long (linger.ms), a common setting
// for throughput.
constexpr char kLingerMs[] = "20";

// ---------------------------------------------------------------------------
// Small helpers shared by the driver and the children.

// A number in a file, rewritten in place. No fsync: SIGKILL does not lose
// what was written to the operating system.
void WriteNumber(int fd, long value) {
  char buf[24];
  const int len = std::snprintf(buf, sizeof buf, "%019ld\n", value);
  if (pwrite(fd, buf, len, 0) != len) std::perror("pwrite");
}

long ReadNumber(const std::string& path, long otherwise) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return otherwise;
  char buf[24] = {};
  const ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
  close(fd);
  return got == 20 ? std::atol(buf) : otherwise;
}

// Sleeps so that record `i` goes out at `rate` records a second after the
// process started sending at record `first`.
void Pace(Clock::time_point start, int first, int i, double rate) {
  std::this_thread::sleep_until(
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>((i - first) / rate)));
}

// ---------------------------------------------------------------------------
// The children: producer processes that may be killed at any moment.

struct ChildFlags {
  std::string kind;  // "spooled" or "plain"
  std::string bootstrap_servers;
  std::string topic;
  std::string state_dir;  // survives the process: spool or progress file
  int records = 0;
  double rate = 0;  // records a second
};

// The exactly-once producer. Everything it needs after a SIGKILL is in the
// spool: the records not yet committed to Kafka, and the cursor (how far the
// input was read) stored atomically with the last of them.
int RunSpooledChild(const ChildFlags& flags, int position_fd) {
  exactly::SpoolOptions options;
  options.dir = flags.state_dir + "/spool";
  options.producer.bootstrap_servers = flags.bootstrap_servers;
  // Stable across restarts: each new process fences the one before and
  // aborts its unfinished transaction.
  options.producer.transactional_id = "demo-writer-" + flags.topic;
  options.producer.properties["linger.ms"] = kLingerMs;
  options.producer.properties["transaction.timeout.ms"] = "10000";
  options.max_batch_time = milliseconds(50);
  options.on_error = [](const absl::Status& s) {
    std::fprintf(stderr, "spooled child: %s\n", s.ToString().c_str());
  };
  auto spool = exactly::SpooledProducer::Create(options);
  if (!spool.ok()) {
    std::fprintf(stderr, "spooled child: %s\n",
                 spool.status().ToString().c_str());
    return 1;
  }
  // Resume right after the last record the spool holds (or has delivered).
  const std::string& cursor = (*spool)->recovered_cursor();
  const int first = cursor.empty() ? 0 : std::atoi(cursor.c_str()) + 1;
  std::fprintf(stderr, "spooled child %d: resuming at %d\n", getpid(), first);
  const Clock::time_point start = Clock::now();
  for (int i = first; i < flags.records; i += kChunk) {
    const int end = std::min(flags.records, i + kChunk);
    std::vector<std::string> values;
    for (int j = i; j < end; ++j) values.push_back(std::to_string(j));
    std::vector<exactly::Record> records;
    for (const std::string& v : values) {
      records.push_back({.topic = flags.topic, .value = v});
    }
    // One write and one sync for the chunk, with the cursor "end - 1": if
    // the process dies at any point, the spool holds either the whole chunk
    // and its cursor, or neither.
    absl::Status s = (*spool)->SendBatch(records, std::to_string(end - 1));
    if (!s.ok()) {
      std::fprintf(stderr, "spooled child: send: %s\n", s.ToString().c_str());
      return 1;
    }
    WriteNumber(position_fd, end);
    Pace(start, first, end, flags.rate);
  }
  // Everything is on disk; wait until the drainer has committed it to Kafka.
  for (;;) {
    absl::Status s = (*spool)->Flush(std::chrono::seconds(1));
    if (s.ok()) break;
    if (s.code() != absl::StatusCode::kDeadlineExceeded) {
      std::fprintf(stderr, "spooled child: flush: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  return (*spool)->Close().ok() ? 0 : 1;
}

// The plain producer's application state.
struct PlainApp {
  int progress_fd = -1;
  int read_position = 0;  // records taken from the input so far
};

// Like many applications, it saves its input position whenever the producer
// reports a delivery ("that one made it, so we are good up to here"). But
// the input position is ahead of the delivered record by whatever sits in
// librdkafka's buffers; killed, the process loses those buffers, and the
// restart skips them.
void OnPlainDelivery(rd_kafka_t*, const rd_kafka_message_t* message,
                     void* opaque) {
  auto* app = static_cast<PlainApp*>(opaque);
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::fprintf(stderr, "plain child: delivery failed: %s\n",
                 rd_kafka_err2str(message->err));
    return;
  }
  WriteNumber(app->progress_fd, app->read_position);
}

// The plain producer: acks=1, no idempotence, no spool. When the broker drops
// a response after appending, librdkafka sends the batch again and, without
// idempotence, the broker stores it twice.
int RunPlainChild(const ChildFlags& flags, int position_fd) {
  PlainApp app;
  const std::string progress = flags.state_dir + "/progress";
  app.progress_fd = open(progress.c_str(), O_RDWR | O_CREAT, 0644);
  if (app.progress_fd < 0) {
    std::perror("plain child: progress file");
    return 1;
  }
  app.read_position = static_cast<int>(ReadNumber(progress, 0));
  const int first = app.read_position;
  std::fprintf(stderr, "plain child %d: resuming at %d\n", getpid(), first);

  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::pair<const char*, std::string> properties[] = {
      {"bootstrap.servers", flags.bootstrap_servers},
      {"acks", "1"},
      {"enable.idempotence", "false"},
      {"linger.ms", kLingerMs},
  };
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf, name, value.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      std::fprintf(stderr, "plain child: %s\n", err);
      return 1;
    }
  }
  rd_kafka_conf_set_dr_msg_cb(conf, OnPlainDelivery);
  rd_kafka_conf_set_opaque(conf, &app);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (producer == nullptr) {
    std::fprintf(stderr, "plain child: %s\n", err);
    return 1;
  }
  const Clock::time_point start = Clock::now();
  for (int i = first; i < flags.records; ++i) {
    const std::string value = std::to_string(i);
    rd_kafka_resp_err_t e;
    while ((e = rd_kafka_producev(
                producer, RD_KAFKA_V_TOPIC(flags.topic.c_str()),
                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END)) ==
           RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(producer, 10);
    }
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::fprintf(stderr, "plain child: produce: %s\n", rd_kafka_err2str(e));
      return 1;
    }
    app.read_position = i + 1;
    rd_kafka_poll(producer, 0);  // serves delivery reports, as documented
    if ((i + 1) % 10 == 0 || i + 1 == flags.records) {
      WriteNumber(position_fd, i + 1);
      Pace(start, first, i + 1, flags.rate);
    }
  }
  const rd_kafka_resp_err_t flushed = rd_kafka_flush(producer, 60000);
  rd_kafka_destroy(producer);
  return flushed == RD_KAFKA_RESP_ERR_NO_ERROR ? 0 : 1;
}

int RunChild(const ChildFlags& flags) {
  const std::string position = flags.state_dir + "/position";
  const int position_fd = open(position.c_str(), O_RDWR | O_CREAT, 0644);
  if (position_fd < 0) {
    std::perror("child: position file");
    return 1;
  }
  return flags.kind == "spooled" ? RunSpooledChild(flags, position_fd)
                                 : RunPlainChild(flags, position_fd);
}

// ---------------------------------------------------------------------------
// The driver.

volatile std::sig_atomic_t interrupted = 0;

struct DemoFlags {
  int records = 20000;
  int kills = 7;
  double seconds = 8;  // how long sending N records takes, unkilled
  int partitions = 3;
  unsigned seed = std::random_device{}();
  bool keep = false;
  std::string bootstrap_servers;  // a cluster to use instead of the bundled one
  std::string mid_run_command;    // run in the middle of each run (a fault)
};

// One child process: this binary with --child.
class Child {
 public:
  Child(const std::string& self, const std::vector<std::string>& args) {
    // Everything the child needs is prepared before fork(): the driver has
    // threads (the broker's), so the child may only call exec and friends.
    std::vector<std::string> copy = args;
    std::vector<char*> argv = {const_cast<char*>(self.c_str())};
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      // Dies with the driver, whatever ends it.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(STDERR_FILENO, STDOUT_FILENO);  // both into the demo's log
      // Not the broker's sockets: a child must not hold them open.
      close_range(3, ~0U, 0);
      execv(self.c_str(), argv.data());
      _exit(127);
    }
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  // Whether it exited by itself (its wait status in *status).
  bool Exited(int* status) {
    if (pid_ > 0 && waitpid(pid_, status, WNOHANG) == pid_) {
      pid_ = -1;
      return true;
    }
    return false;
  }
  void KillNow() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

struct RunResult {
  std::string name;
  std::string topic;
  int kills = 0;
  bool finished = false;  // the last process exited 0
  long dropped_responses = 0;
  long read = 0;
  long missing = 0;
  long duplicated = 0;
  long unexpected = 0;
  double seconds = 0;
};

long DroppedResponses(exactly::broker::Broker* broker) {
  long n = 0;
  if (broker == nullptr) return 0;  // a real cluster drops none on purpose
  for (const std::string& fault : broker->faults().History()) {
    n += fault.starts_with("appended") ? 1 : 0;
  }
  return n;
}

void ShowProgress(const RunResult& run, long sent, int total, int planned,
                  double elapsed) {
  if (!isatty(STDOUT_FILENO)) return;
  const int width = 24;
  const int filled =
      static_cast<int>(width * std::min(1.0, double(sent) / total));
  std::printf("\r  %-13s [%s%s] %6ld/%d sent  kills %d/%d  %4.1f s ",
              run.name.c_str(), std::string(filled, '#').c_str(),
              std::string(width - filled, '.').c_str(), sent, total, run.kills,
              planned, elapsed);
  std::fflush(stdout);
}

// Runs one kind of producer: `flags.kills` processes killed at random
// moments, then one that runs to the end.
RunResult RunWithKills(const std::string& self, const std::string& kind,
                       const std::string& name, const std::string& dir,
                       const std::string& bootstrap, const std::string& topic,
                       const DemoFlags& flags,
                       exactly::broker::Broker* broker) {
  RunResult run;
  run.name = name;
  run.topic = topic;
  const std::string state = dir + "/" + kind;
  std::filesystem::create_directories(state);
  const std::vector<std::string> args = {
      "--child",
      kind,
      "--bootstrap-servers",
      bootstrap,
      "--topic",
      topic,
      "--state-dir",
      state,
      "--records",
      std::to_string(flags.records),
      "--rate",
      std::to_string(flags.records / flags.seconds)};
  const long dropped_before = DroppedResponses(broker);
  // The same seed for both kinds: the same kill moments.
  std::mt19937 random(flags.seed);
  std::uniform_int_distribution<int> lifetime_ms(300, 1500);
  std::uniform_int_distribution<int> short_lifetime_ms(20, 300);
  const Clock::time_point start = Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  auto sent = [&] { return ReadNumber(state + "/position", 0); };
  std::thread mid_run;  // the --mid-run-command, beside the producer
  for (int round = 0; round <= flags.kills && !interrupted; ++round) {
    const bool last = round == flags.kills;
    if (round == flags.kills / 2 && !flags.mid_run_command.empty()) {
      mid_run = std::thread([&] {
        if (std::system(flags.mid_run_command.c_str()) != 0) {
          std::fprintf(stderr, "--mid-run-command failed: %s\n",
                       flags.mid_run_command.c_str());
        }
      });
    }
    // Every fourth process dies young: while it opens its state, connects
    // or recovers.
    const milliseconds lifetime(round % 4 == 3 ? short_lifetime_ms(random)
                                               : lifetime_ms(random));
    Child child(self, args);
    if (!child.started()) break;
    const Clock::time_point deadline =
        Clock::now() + (last ? milliseconds(180000) : lifetime);
    int status = 0;
    bool exited = false;
    while (!interrupted && Clock::now() < deadline) {
      if ((exited = child.Exited(&status))) break;
      ShowProgress(run, sent(), flags.records, flags.kills, elapsed());
      std::this_thread::sleep_until(
          std::min(deadline, Clock::now() + milliseconds(50)));
    }
    if (exited) {
      // Done before its planned kill (or the last one): no more rounds.
      run.finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      break;
    }
    if (interrupted || last) break;  // the destructor kills it
    // SIGKILL: no destructor, no flush, no clean shutdown.
    child.KillNow();
    ++run.kills;
    if (!isatty(STDOUT_FILENO)) {
      std::printf("  %s: SIGKILL %d at %ld/%d sent\n", name.c_str(), run.kills,
                  sent(), flags.records);
      std::fflush(stdout);
    }
  }
  if (mid_run.joinable()) mid_run.join();
  run.seconds = elapsed();
  ShowProgress(run, sent(), flags.records, flags.kills, run.seconds);
  if (isatty(STDOUT_FILENO)) std::printf("\n");
  run.dropped_responses = DroppedResponses(broker) - dropped_before;
  return run;
}

// Reads a topic to its end with a read_committed consumer and counts each
// record "0".."n-1".
bool Count(const std::string& bootstrap, const std::string& topic,
           int partitions, int n, RunResult& run) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::pair<const char*, const char*> properties[] = {
      {"bootstrap.servers", bootstrap.c_str()},
      {"group.id", "exactly-once-demo-counter"},
      {"isolation.level", "read_committed"},
      {"enable.auto.commit", "false"},
      {"enable.partition.eof", "true"},
  };
  for (const auto& [name, value] : properties) {
    rd_kafka_conf_set(conf, name, value, err, sizeof err);
  }
  rd_kafka_t* consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (consumer == nullptr) return false;
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(consumer, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::vector<int> copies(n, 0);
  std::vector<bool> at_end(partitions, false);
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (std::count(at_end.begin(), at_end.end(), true) < partitions &&
         Clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end[m->partition] = true;
    } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++run.read;
      const std::string value(static_cast<const char*>(m->payload), m->len);
      const long i = std::atol(value.c_str());
      if (i >= 0 && i < n && value == std::to_string(i)) {
        ++copies[i];
      } else {
        ++run.unexpected;
      }
    }
    rd_kafka_message_destroy(m);
  }
  const bool complete =
      std::count(at_end.begin(), at_end.end(), true) == partitions;
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  for (int c : copies) {
    if (c == 0) ++run.missing;
    if (c > 1) run.duplicated += c - 1;
  }
  return complete;
}

void PrintTable(const DemoFlags& flags, const RunResult& a,
                const RunResult& b) {
  const std::string sent = "0.." + std::to_string(flags.records - 1);
  auto row = [&](const char* label, const std::string& x,
                 const std::string& y) {
    std::printf("  %-28s %-24s %s\n", label, x.c_str(), y.c_str());
  };
  auto num = [](long v) { return std::to_string(v); };
  std::printf("\n");
  row("", "exactly-once", "plain producer");
  row("", "(spool + transactions)", "(acks=1, no idempotence)");
  row("records sent", sent, sent);
  row("SIGKILLs (then restarted)", num(a.kills), num(b.kills));
  row("produce responses dropped", num(a.dropped_responses),
      num(b.dropped_responses));
  row("read back (read_committed)", num(a.read), num(b.read));
  row("missing", num(a.missing), num(b.missing));
  row("duplicated", num(a.duplicated), num(b.duplicated));
  char ta[16], tb[16];
  std::snprintf(ta, sizeof ta, "%.1f s", a.seconds);
  std::snprintf(tb, sizeof tb, "%.1f s", b.seconds);
  row("time to send everything", ta, tb);
  std::printf("\n");
}

bool ParseDemoFlags(int argc, char** argv, DemoFlags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--records" && has_value) {
      flags.records = std::atoi(argv[++i]);
    } else if (arg == "--kills" && has_value) {
      flags.kills = std::atoi(argv[++i]);
    } else if (arg == "--seconds" && has_value) {
      flags.seconds = std::atof(argv[++i]);
    } else if (arg == "--partitions" && has_value) {
      flags.partitions = std::atoi(argv[++i]);
    } else if (arg == "--seed" && has_value) {
      flags.seed = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (arg == "--keep") {
      flags.keep = true;
    } else if (arg == "--bootstrap-servers" && has_value) {
      flags.bootstrap_servers = argv[++i];
    } else if (arg == "--mid-run-command" && has_value) {
      flags.mid_run_command = argv[++i];
    } else {
      return false;
    }
  }
  return flags.records > 0 && flags.kills >= 0 && flags.seconds > 0 &&
         flags.partitions > 0;
}

bool ParseChildFlags(int argc, char** argv, ChildFlags& flags) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const char* value = argv[i + 1];
    if (arg == "--child") {
      flags.kind = value;
    } else if (arg == "--bootstrap-servers") {
      flags.bootstrap_servers = value;
    } else if (arg == "--topic") {
      flags.topic = value;
    } else if (arg == "--state-dir") {
      flags.state_dir = value;
    } else if (arg == "--records") {
      flags.records = std::atoi(value);
    } else if (arg == "--rate") {
      flags.rate = std::atof(value);
    } else {
      return false;
    }
  }
  return (flags.kind == "spooled" || flags.kind == "plain") && flags.rate > 0 &&
         !flags.state_dir.empty();
}

// Creates `topic` on a given cluster with its default replication factor.
absl::Status CreateTopic(const std::string& bootstrap, const std::string& topic,
                         int partitions) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err,
                    sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) return absl::InternalError(err);
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, err, sizeof err);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &new_topic, 1, nullptr, queue);
  absl::Status status = absl::DeadlineExceededError("CreateTopics timed out");
  if (rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 60000)) {
    status = absl::OkStatus();
    size_t n = 0;
    const rd_kafka_CreateTopics_result_t* result =
        rd_kafka_event_CreateTopics_result(event);
    const rd_kafka_topic_result_t** topics =
        result != nullptr ? rd_kafka_CreateTopics_result_topics(result, &n)
                          : nullptr;
    if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = absl::InternalError(rd_kafka_event_error_string(event));
    }
    for (size_t i = 0; i < n; ++i) {
      if (rd_kafka_topic_result_error(topics[i]) !=
              RD_KAFKA_RESP_ERR_NO_ERROR &&
          rd_kafka_topic_result_error(topics[i]) !=
              RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        status =
            absl::InternalError(rd_kafka_topic_result_error_string(topics[i]));
      }
    }
    rd_kafka_event_destroy(event);
  }
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(new_topic);
  rd_kafka_destroy(rk);
  return status;
}

int RunDemo(const DemoFlags& flags, FILE* out_err) {
  char tmpl[] = "/tmp/exactly-demo-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = tmpl;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");

  // The broker logs every injected fault, and the children log their
  // restarts, on stderr: into a file, so that the terminal shows the
  // progress and the table.
  const std::string log = dir + "/demo.log";
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (log_fd < 0 || dup2(log_fd, STDERR_FILENO) < 0) {
    std::perror("log file");
    return 1;
  }
  close(log_fd);

  std::unique_ptr<exactly::broker::Broker> broker;  // null on a given cluster
  std::string bootstrap = flags.bootstrap_servers;
  // Topics of their own on a given cluster, which may hold earlier runs'.
  const std::string suffix =
      bootstrap.empty() ? "" : "-" + std::to_string(flags.seed);
  const std::string exactly_topic = "demo-exactly-once" + suffix;
  const std::string plain_topic = "demo-plain" + suffix;
  if (bootstrap.empty()) {
    exactly::broker::BrokerOptions options;
    options.data_dir = dir + "/broker";
    auto started = exactly::broker::Broker::Start(options);
    if (!started.ok()) {
      std::fprintf(out_err, "cannot start the bundled broker: %s\n",
                   started.status().ToString().c_str());
      return 1;
    }
    broker = std::move(*started);
    bootstrap = broker->bootstrap_servers();
  }
  for (const std::string& topic : {exactly_topic, plain_topic}) {
    absl::Status s = broker != nullptr
                         ? broker->CreateTopic(topic, flags.partitions)
                         : CreateTopic(bootstrap, topic, flags.partitions);
    if (!s.ok()) {
      std::fprintf(out_err, "create topic: %s\n", s.ToString().c_str());
      return 1;
    }
    // The same fault for both: 1 produce response in 10 is lost after the
    // broker appended the batch, so the client sends it again.
    if (broker != nullptr) {
      broker->faults().DropProduceResponses(-1, /*one_in=*/10,
                                            {.topic = topic});
    }
  }
  if (broker != nullptr) {
    // And every produce response takes 30 ms, as from a cluster across a
    // network: records spend that long between "appended" and
    // "acknowledged".
    broker->faults().AddLatency(30, {.api_key = 0 /* Produce */});
  }
  std::printf(
      "exactly-once demo: %d records (0..%d) per producer, %d SIGKILLs at "
      "random moments;\n%s %s%s\n"
      "seed %u (--seed %u repeats the kill moments); log: %s (kept with "
      "--keep or on failure)\n\n",
      flags.records, flags.records - 1, flags.kills,
      broker != nullptr ? "the broker at" : "the cluster at", bootstrap.c_str(),
      broker != nullptr
          ? " answers produce requests after 30 ms and drops 1 response in 10"
          : (flags.mid_run_command.empty()
                 ? ""
                 : ("; mid-run: " + flags.mid_run_command).c_str()),
      flags.seed, flags.seed, log.c_str());
  std::fflush(stdout);

  RunResult exactly_run =
      RunWithKills(self, "spooled", "exactly-once", dir, bootstrap,
                   exactly_topic, flags, broker.get());
  RunResult plain_run = RunWithKills(self, "plain", "plain", dir, bootstrap,
                                     plain_topic, flags, broker.get());
  if (broker != nullptr) broker->faults().Clear();
  if (interrupted) {
    broker.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return 130;
  }

  bool ok = true;
  for (RunResult* run : {&exactly_run, &plain_run}) {
    if (!run->finished) {
      std::fprintf(out_err, "the last %s producer did not finish (see %s)\n",
                   run->name.c_str(), log.c_str());
      ok = ok && run != &exactly_run;
    }
    if (!Count(bootstrap, run->topic, flags.partitions, flags.records, *run)) {
      std::fprintf(out_err, "could not read %s to its end\n",
                   run->topic.c_str());
      ok = ok && run != &exactly_run;
    }
  }
  PrintTable(flags, exactly_run, plain_run);
  ok = ok && exactly_run.missing == 0 && exactly_run.duplicated == 0 &&
       exactly_run.unexpected == 0;
  if (ok) {
    std::printf(
        "exactly-once: every record once, through %d SIGKILLs. The plain "
        "producer lost %ld and duplicated %ld.\n",
        exactly_run.kills, plain_run.missing, plain_run.duplicated);
  } else {
    std::printf("FAILED: the exactly-once run is not exact (logs in %s)\n",
                log.c_str());
  }
  broker.reset();
  if (ok && !flags.keep) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--child") {
    ChildFlags flags;
    if (!ParseChildFlags(argc, argv, flags)) return 2;
    return RunChild(flags);
  }
  DemoFlags flags;
  if (!ParseDemoFlags(argc, argv, flags)) {
    std::fprintf(stderr,
                 "usage: %s [--records N] [--kills K] [--seconds S] "
                 "[--seed X] [--partitions P] [--keep] "
                 "[--bootstrap-servers B [--mid-run-command CMD]]\n",
                 argv[0]);
    return 2;
  }
  // stderr is about to go into the log; keep the terminal for our errors.
  FILE* out_err = fdopen(dup(STDERR_FILENO), "w");
  std::signal(SIGINT, [](int) { interrupted = 1; });
  std::signal(SIGTERM, [](int) { interrupted = 1; });
  std::signal(SIGPIPE, SIG_IGN);
  return RunDemo(flags, out_err);
}
