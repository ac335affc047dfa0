// The Spool workload: one thread sends records through a spooled producer
// (transactional.id set: exactly once); every Send that returned OK is a
// committed one-record "attempt". The spool is closed and opened again a few
// times on the way, as a restarted service would, and drained at the end.
#include <random>
#include <span>
#include <thread>

#include "absl/strings/str_cat.h"
#include "eos/workload.h"
#include "exactly/exactly.h"
#include "exactly/spool.h"

namespace exactly::eos {
namespace {

using Clock = std::chrono::steady_clock;

SpoolOptions Options(const WorkloadOptions& w) {
  SpoolOptions o;
  o.dir = w.spool_dir;
  o.producer.bootstrap_servers = w.bootstrap_servers;
  o.producer.transactional_id = absl::StrCat(w.writer, "-spool");
  o.producer.properties["transaction.timeout.ms"] = "10000";
  o.producer.properties["linger.ms"] = "2";
  o.producer.retry.initial_backoff = std::chrono::milliseconds(10);
  o.producer.retry.max_backoff = std::chrono::milliseconds(200);
  o.max_batch_time = std::chrono::milliseconds(30);
  o.recovery_timeout = std::chrono::milliseconds(10000);
  o.on_error = [](const absl::Status&) {};
  return o;
}

}  // namespace

WorkloadResult RunSpool(const WorkloadOptions& w) {
  WorkloadResult result;
  result.topics = {w.topic};
  Ready(w);
  History history;
  std::mt19937_64 rng(w.seed);
  const auto end = Clock::now() + w.duration;
  int64_t seq = 0;
  // A few lives of the spool, each sending for a while.
  const int lives = 3;
  for (int life = 0; life < lives; ++life) {
    absl::StatusOr<std::unique_ptr<SpooledProducer>> spool =
        SpooledProducer::Create(Options(w));
    if (!spool.ok()) {
      result.errors.push_back(spool.status().ToString());
      break;
    }
    const auto life_end =
        life + 1 == lives ? end : Clock::now() + w.duration / lives;
    while (Clock::now() < life_end && seq < w.transactions) {
      // Calls of 1..8 records: all or none.
      const int n = std::uniform_int_distribution<int>(1, 8)(rng);
      std::vector<std::string> values;
      std::vector<Record> records;
      std::vector<AttemptId> ids;
      for (int i = 0; i < n; ++i, ++seq) {
        ids.push_back({.writer = w.writer, .txn = seq, .attempt = 0});
        values.push_back(EncodeValue({.attempt = ids.back(), .count = 1}));
      }
      for (int i = 0; i < n; ++i) {
        records.push_back(
            {.topic = w.topic,
             .value = values[i],
             .partition = static_cast<int32_t>(ids[i].txn % w.partitions)});
        history.Begin(ids[i]);
      }
      absl::Status s = (*spool)->SendBatch(records);
      for (const AttemptId& id : ids) {
        if (s.ok()) history.Sent(id);
        history.Finish(id, s.ok() ? Outcome::kCommitted : Outcome::kUnknown);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(
          std::uniform_int_distribution<int>(0, 3)(rng)));
    }
    if (life + 1 == lives) {
      // Everything sent must reach Kafka; faults may slow the drain.
      absl::Status flushed = (*spool)->Flush(std::chrono::seconds(90));
      if (!flushed.ok()) {
        result.errors.push_back(
            absl::StrCat("the spool did not drain: ", flushed.ToString()));
      }
    }
    result.rebuilds += static_cast<int64_t>((*spool)->metrics().recoveries);
    (*spool)->Close().IgnoreError();
  }
  result.attempts = history.attempts();
  return result;
}

}  // namespace exactly::eos
