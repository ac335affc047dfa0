// The transactional produce loop the benchmarks share (txn_bench,
// cluster_bench): raw librdkafka, records round-robin over the partitions,
// a transaction committed every `commit_ms`.
#ifndef EXACTLY_BENCH_TXN_LOOP_H_
#define EXACTLY_BENCH_TXN_LOOP_H_

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "bench/bench_util.h"

namespace exactly::bench {

inline void DieOn(rd_kafka_error_t* e, const char* what) {
  if (e == nullptr) return;
  std::string why = std::string(what) + ": " + rd_kafka_error_string(e);
  rd_kafka_error_destroy(e);
  Die(why);
}

// An idempotent producer with linger.ms=5 (plus `extra`); with a
// transactional id, its transactions initialised (untimed by the loop).
inline RdKafka TxnBenchProducer(
    const std::string& bootstrap, const std::string& txn_id,
    const std::map<std::string, std::string>& extra = {}) {
  std::map<std::string, std::string> props = {{"bootstrap.servers", bootstrap},
                                              {"enable.idempotence", "true"},
                                              {"linger.ms", "5"}};
  for (const auto& [k, v] : extra) props[k] = v;
  if (!txn_id.empty()) props["transactional.id"] = txn_id;
  RdKafka p = NewClient(RD_KAFKA_PRODUCER, props);
  if (!txn_id.empty()) {
    DieOn(rd_kafka_init_transactions(p.get(), 30000), "init_transactions");
  }
  return p;
}

struct CommitLoopResult {
  double seconds = 0;   // from the first send to the end of the last commit
  int64_t records = 0;  // committed (or flushed)
  int64_t commits = 0;
  // Mean time inside commit_transaction (or the flush standing in for it):
  // the producer sends nothing meanwhile, so it bounds the rate.
  double commit_ms = 0;
  // CPU time of the whole process (client and broker threads) per record.
  double cpu_us_per_record = 0;
};

// Produces `value_bytes` records round-robin over `partitions` of `topic` for
// `seconds`, ending a transaction every `commit_ms` (commit_transaction when
// `transactional`, else a flush in its place). Every transaction spans every
// partition (1,000 records at a time), so a commit writes one marker to each.
inline CommitLoopResult CommitEvery(rd_kafka_t* p, const std::string& topic,
                                    int partitions, size_t value_bytes,
                                    double seconds, int commit_ms,
                                    bool transactional) {
  const std::string value(value_bytes, 't');
  int64_t sent = 0;
  CommitLoopResult r;
  Stopwatch total;
  const double cpu_start = ProcessCpuSeconds();
  while (total.Seconds() < seconds) {
    if (transactional) {
      DieOn(rd_kafka_begin_transaction(p), "begin_transaction");
    }
    Stopwatch slice;
    while (slice.Seconds() * 1000 < commit_ms) {
      for (int i = 0; i < 1000; ++i) {
        ProduceOrDie(p, topic, static_cast<int32_t>(sent++ % partitions),
                     value);
      }
      rd_kafka_poll(p, 0);
    }
    Stopwatch commit;
    if (transactional) {
      DieOn(rd_kafka_commit_transaction(p, 60000), "commit_transaction");
    } else if (rd_kafka_flush(p, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      Die("flush");
    }
    r.commit_ms += commit.Seconds() * 1000;
    ++r.commits;
    r.records = sent;
  }
  r.seconds = total.Seconds();
  if (r.commits > 0) r.commit_ms /= static_cast<double>(r.commits);
  r.cpu_us_per_record = (ProcessCpuSeconds() - cpu_start) * 1e6 /
                        static_cast<double>(std::max<int64_t>(r.records, 1));
  return r;
}

}  // namespace exactly::bench

#endif  // EXACTLY_BENCH_TXN_LOOP_H_
