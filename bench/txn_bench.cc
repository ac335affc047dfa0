// Transactions on the bundled broker: a transactional producer committing every 100 ms against
// an idempotent producer, both on the bundled broker, and the same transactional run on
// librdkafka's mock cluster (which writes no markers and filters nothing).
//
//   txn_bench [--seconds S] [--rounds R] [--commit-ms MS]
//
// Targets (issue "Bundled broker, part 3"): transactional >= 0.9x idempotent on the bundled
// broker; bundled >= 1.0x the mock cluster on the same transactional workload.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "exactly/broker/broker.h"

namespace exactly::bench {
namespace {

constexpr int kPartitions = 3;
constexpr size_t kValueBytes = 100;

// Records per second over `seconds`, acknowledged (idempotent) or committed (transactional).
double Run(const std::string& bootstrap, const std::string& topic, bool transactional,
           double seconds, int commit_ms, int round) {
  std::map<std::string, std::string> props = {{"bootstrap.servers", bootstrap},
                                              {"enable.idempotence", "true"},
                                              {"linger.ms", "5"},
                                              {"queue.buffering.max.messages", "1000000"}};
  if (transactional) props["transactional.id"] = "txn-bench-" + std::to_string(round);
  RdKafka p = NewClient(RD_KAFKA_PRODUCER, props);
  if (transactional) {
    if (rd_kafka_error_t* e = rd_kafka_init_transactions(p.get(), 30000)) {
      Die(rd_kafka_error_string(e));
    }
  }
  std::string value(kValueBytes, 't');
  int64_t done = 0;
  int64_t sent = 0;
  Stopwatch total;
  while (total.Seconds() < seconds) {
    if (transactional) {
      if (rd_kafka_error_t* e = rd_kafka_begin_transaction(p.get())) Die(rd_kafka_error_string(e));
    }
    Stopwatch slice;
    while (slice.Seconds() * 1000 < commit_ms) {
      for (int i = 0; i < 1000; ++i) {
        ProduceOrDie(p.get(), topic, static_cast<int32_t>(sent++ % kPartitions), value);
      }
      rd_kafka_poll(p.get(), 0);
    }
    if (transactional) {
      if (rd_kafka_error_t* e = rd_kafka_commit_transaction(p.get(), 60000)) {
        Die(rd_kafka_error_string(e));
      }
    } else {
      if (rd_kafka_flush(p.get(), 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) Die("flush");
    }
    done = sent;
  }
  return static_cast<double>(done) / total.Seconds();
}

}  // namespace
}  // namespace exactly::bench

int main(int argc, char** argv) {
  using namespace exactly::bench;  // NOLINT
  Args args(argc, argv);
  double seconds = static_cast<double>(args.Int("--seconds", 5));
  int rounds = static_cast<int>(args.Int("--rounds", 3));
  int commit_ms = static_cast<int>(args.Int("--commit-ms", 100));
  std::printf("txn_bench: librdkafka %s, %zu-byte records, %d partitions, commit every %d ms, "
              "%.0f s per run, median of %d rounds\n",
              rd_kafka_version_str(), kValueBytes, kPartitions, commit_ms, seconds, rounds);
  std::vector<double> idem, txn, mock_txn;
  for (int r = 0; r < rounds; ++r) {
    {
      auto broker = exactly::broker::Broker::Start({});
      if (!broker.ok()) Die("start");
      (*broker)->CreateTopic("idem", kPartitions);
      (*broker)->CreateTopic("txn", kPartitions);
      idem.push_back(Run((*broker)->bootstrap_servers(), "idem", false, seconds, commit_ms, r));
      txn.push_back(Run((*broker)->bootstrap_servers(), "txn", true, seconds, commit_ms, r));
    }
    {
      char err[256];
      rd_kafka_conf_t* conf = rd_kafka_conf_new();
      rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
      rd_kafka_mock_cluster_t* mock = rd_kafka_mock_cluster_new(handle, 1);
      rd_kafka_mock_topic_create(mock, "txn", kPartitions, 1);
      mock_txn.push_back(
          Run(rd_kafka_mock_cluster_bootstraps(mock), "txn", true, seconds, commit_ms, r));
      rd_kafka_mock_cluster_destroy(mock);
      rd_kafka_destroy(handle);
    }
  }
  double i = Median(idem), t = Median(txn), m = Median(mock_txn);
  std::printf("\n%-45s %12s\n", "run", "records/s");
  std::printf("%-45s %12.0f\n", "bundled broker, idempotent", i);
  std::printf("%-45s %12.0f  (%.2fx idempotent)\n", "bundled broker, transactional", t, t / i);
  std::printf("%-45s %12.0f  (bundled is %.2fx)\n", "mock cluster, transactional (no markers)", m,
              t / m);
  Verdict v;
  v.Check("transactional >= 0.9x idempotent (bundled)", t / i, 0.9);
  v.Check("bundled >= 1.0x mock, transactional", t / m, 1.0);
  return v.Print();
}
