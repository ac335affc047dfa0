// A spooled producer in a process of its own, for the SIGKILL tests: it
// sends records FIRST..N-1 (value "v%06d", key "k<i % 8>"), resuming after
// the spool's recovered cursor, writes each acknowledged number to ACK_FILE
// (one line each, appended: a killed process loses none of them), and once
// all are sent waits until the spool is drained, then exits 0. It may be
// killed at any moment. With DELAY_US > 0 it sends one record at a time
// (every 7th round a batch of 5), pausing DELAY_US after each; with 0 it
// goes flat out, in batches of 25. With "async" it calls SendAsync instead
// of Send/SendBatch and acknowledges in the completions (so several calls
// are on their way to the disk when it is killed).
//
//   exactly_spool_child BOOTSTRAP DIR TOPIC CHECKPOINT_TOPIC TRANSACTIONAL_ID
//                       N ACK_FILE [DELAY_US [async]]
//
// An empty TRANSACTIONAL_ID ("") runs the spool at least once.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "exactly/exactly.h"
#include "exactly/spool.h"

namespace {

std::string Value(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "v%06d", i);
  return buf;
}

void Ack(int fd, int first, int last) {
  std::string lines;
  for (int i = first; i <= last; ++i) lines += std::to_string(i) + "\n";
  if (write(fd, lines.data(), lines.size()) !=
      static_cast<ssize_t>(lines.size())) {
    std::perror("spool_child: ack");
    std::exit(4);
  }
}

// Records first..last with SendAsync; the completion acknowledges them.
void SendAsync(exactly::SpooledProducer& spool,
               std::span<const exactly::Record> records, int ack, int first,
               int last) {
  absl::Status s = spool.SendAsync(
      records,
      [ack, first, last](const absl::Status& outcome) {
        if (!outcome.ok()) {
          std::fprintf(stderr, "spool_child: send: %s\n",
                       outcome.ToString().c_str());
          std::_Exit(3);
        }
        Ack(ack, first, last);
      },
      std::to_string(last));
  if (!s.ok()) {
    std::fprintf(stderr, "spool_child: send: %s\n", s.ToString().c_str());
    std::exit(3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 8 || argc > 10) {
    std::fprintf(stderr,
                 "usage: %s BOOTSTRAP DIR TOPIC CHECKPOINT_TOPIC "
                 "TRANSACTIONAL_ID N ACK_FILE [DELAY_US [async]]\n",
                 argv[0]);
    return 2;
  }
  const bool async = argc == 10 && std::string(argv[9]) == "async";
  const std::string topic = argv[3];
  const int n = std::atoi(argv[6]);
  const auto delay =
      std::chrono::microseconds(argc >= 9 ? std::atol(argv[8]) : 0);
  exactly::SpoolOptions o;
  o.dir = argv[2];
  o.producer.bootstrap_servers = argv[1];
  o.producer.transactional_id = argv[5];
  o.producer.properties["linger.ms"] = "2";
  o.producer.properties["transaction.timeout.ms"] = "10000";
  o.producer.properties["socket.connection.setup.timeout.ms"] = "3000";
  o.producer.properties["reconnect.backoff.ms"] = "20";
  o.producer.properties["reconnect.backoff.max.ms"] = "200";
  o.producer.properties["retry.backoff.ms"] = "20";
  o.producer.transaction_call_timeout = std::chrono::milliseconds(2000);
  o.producer.retry.initial_backoff = std::chrono::milliseconds(20);
  o.producer.retry.max_backoff = std::chrono::milliseconds(200);
  o.checkpoint_topic = argv[4];
  // Small transactions: many commits to be killed in.
  o.max_batch_records = 100;
  o.max_batch_time = std::chrono::milliseconds(20);
  o.on_error = [](const absl::Status& s) {
    std::fprintf(stderr, "spool_child: %s\n", s.ToString().c_str());
  };
  auto spool = exactly::SpooledProducer::Create(o);
  if (!spool.ok()) {
    std::fprintf(stderr, "spool_child: %s\n",
                 spool.status().ToString().c_str());
    return 1;
  }
  const int ack = open(argv[7], O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (ack < 0) {
    std::perror("spool_child: open ack file");
    return 1;
  }
  // SPOOL_CHILD_VERBOSE=1: the spool's metrics every 200 ms, for debugging.
  std::thread reporter;
  if (std::getenv("SPOOL_CHILD_VERBOSE") != nullptr) {
    reporter = std::thread([&spool] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const exactly::SpoolMetrics m = (*spool)->metrics();
        std::fprintf(stderr,
                     "spool_child: depth %llu appended %llu sent %llu "
                     "committed %llu txns %llu recoveries %llu errors %llu "
                     "commit %lld us\n",
                     (unsigned long long)m.depth,
                     (unsigned long long)m.appended, (unsigned long long)m.sent,
                     (unsigned long long)m.committed,
                     (unsigned long long)m.transactions,
                     (unsigned long long)m.recoveries,
                     (unsigned long long)m.drainer_errors,
                     (long long)m.last_commit_latency.count());
      }
    });
    reporter.detach();
  }
  const std::string& cursor = (*spool)->recovered_cursor();
  int i = cursor.empty() ? 0 : std::atoi(cursor.c_str()) + 1;
  std::printf("start %d\n", i);
  std::fflush(stdout);
  while (i < n) {
    // A batch is one write and one sync for all its records.
    const int batch = delay.count() == 0 ? 25 : i % 7 == 0 ? 5 : 1;
    if (batch > 1 && i + 1 < n) {
      const int last = std::min(n - 1, i + batch - 1);
      std::vector<std::string> keys, values;
      for (int j = i; j <= last; ++j) {
        keys.push_back("k" + std::to_string(j % 8));
        values.push_back(Value(j));
      }
      std::vector<exactly::Record> records;
      for (size_t j = 0; j < keys.size(); ++j) {
        records.push_back({.topic = topic, .key = keys[j], .value = values[j]});
      }
      if (async) {
        SendAsync(**spool, records, ack, i, last);
      } else {
        absl::Status s = (*spool)->SendBatch(records, std::to_string(last));
        if (!s.ok()) {
          std::fprintf(stderr, "spool_child: send: %s\n", s.ToString().c_str());
          return 3;
        }
        Ack(ack, i, last);
      }
      i = last + 1;
    } else {
      const std::string key = "k" + std::to_string(i % 8);
      const std::string value = Value(i);
      const exactly::Record record{.topic = topic, .key = key, .value = value};
      if (async) {
        SendAsync(**spool, {&record, 1}, ack, i, i);
      } else {
        absl::Status s = (*spool)->Send(record, std::to_string(i));
        if (!s.ok()) {
          std::fprintf(stderr, "spool_child: send: %s\n", s.ToString().c_str());
          return 3;
        }
        Ack(ack, i, i);
      }
      ++i;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
  }
  for (;;) {
    absl::Status s = (*spool)->Flush(std::chrono::seconds(1));
    if (s.ok()) break;
    if (s.code() != absl::StatusCode::kDeadlineExceeded) {
      std::fprintf(stderr, "spool_child: flush: %s\n", s.ToString().c_str());
      return 5;
    }
  }
  std::printf("drained\n");
  std::fflush(stdout);
  absl::Status s = (*spool)->Close();
  if (!s.ok()) {
    std::fprintf(stderr, "spool_child: close: %s\n", s.ToString().c_str());
    return 6;
  }
  close(ack);
  return 0;
}
