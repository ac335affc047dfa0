// The Transact and Verbs workloads: one transactional producer writing
// transactions of 1..N records over the topic's partitions.
#include <cstdlib>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "eos/workload.h"
#include "exactly/exactly.h"

namespace exactly::eos {
namespace {

using Clock = std::chrono::steady_clock;

ProducerOptions TransactionalOptions(const WorkloadOptions& w) {
  ProducerOptions o;
  o.bootstrap_servers = w.bootstrap_servers;
  o.transactional_id = absl::StrCat(w.writer, "-txn");
  o.properties["linger.ms"] = "2";
  // Quick reconnects and retries: more of them race with aborts and
  // commits in a run of seconds.
  o.properties["reconnect.backoff.ms"] = "10";
  o.properties["reconnect.backoff.max.ms"] = "200";
  o.properties["retry.backoff.ms"] = "20";
  // A transaction left open (its producer gone) is aborted by the
  // coordinator within this; the reader's patience exceeds it.
  o.properties["transaction.timeout.ms"] = "10000";
  o.retry.initial_backoff = std::chrono::milliseconds(10);
  o.retry.max_backoff = std::chrono::milliseconds(200);
  o.retry.max_retries = 50;
  o.retry.max_attempts = 20;
  o.on_error = [](const absl::Status&) {};  // faults make plenty; quiet
  if (const char* debug = std::getenv("EXACTLY_EOS_DEBUG")) {
    o.properties["debug"] = debug;  // librdkafka's debug contexts
  }
  return o;
}

// What one transaction writes: how many records, to which partitions, and
// whether it is aborted on purpose.
struct Plan {
  int32_t count;
  std::vector<int32_t> partitions;
  bool abort_on_purpose;
};

class Planner {
 public:
  explicit Planner(const WorkloadOptions& w) : w_(w), rng_(w.seed) {}
  Plan Next() {
    Plan plan;
    plan.count = std::uniform_int_distribution<int32_t>(
        w_.min_records_per_transaction, w_.max_records_per_transaction)(rng_);
    for (int32_t i = 0; i < plan.count; ++i) {
      plan.partitions.push_back(w_.round_robin_partitions
                                    ? i % w_.partitions
                                    : std::uniform_int_distribution<int32_t>(
                                          0, w_.partitions - 1)(rng_));
    }
    plan.abort_on_purpose =
        std::bernoulli_distribution(w_.abort_probability)(rng_);
    return plan;
  }
  // A few milliseconds, so that an abort often finds records in flight.
  std::chrono::milliseconds Linger() {
    return std::chrono::milliseconds(
        std::uniform_int_distribution<int>(0, 8)(rng_));
  }

 private:
  const WorkloadOptions& w_;
  std::mt19937_64 rng_;
};

Record RecordFor(const WorkloadOptions& w, const AttemptId& id, int32_t index,
                 int32_t count, int32_t partition, std::string& value) {
  value = EncodeValue({.attempt = id, .index = index, .count = count});
  return {.topic = w.topic, .value = value, .partition = partition};
}

absl::StatusOr<std::unique_ptr<TransactionalProducer>> CreateProducer(
    const WorkloadOptions& w) {
  // The broker may be down or restarting when the run starts a producer.
  absl::StatusOr<std::unique_ptr<TransactionalProducer>> p;
  for (int i = 0; i < 20; ++i) {
    p = TransactionalProducer::Create(TransactionalOptions(w));
    if (p.ok()) return p;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return p;
}

// Ends a transaction whose commit was cut short: commit again until the
// client knows.
Outcome Settle(TransactionalProducer& p) {
  for (int i = 0; i < 100 && p.in_transaction(); ++i) {
    absl::Status s = p.Commit();
    if (s.ok()) return Outcome::kCommitted;
    switch (NextTxnAction(s)) {
      case TxnAction::kRetry:
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      case TxnAction::kAbortAndRerun:
        for (int j = 0; j < 100; ++j) {
          absl::Status a = p.Abort();
          if (a.ok()) return Outcome::kAborted;
          if (NextTxnAction(a) != TxnAction::kRetry) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return Outcome::kUnknown;
      default:
        return Outcome::kUnknown;
    }
  }
  return Outcome::kUnknown;
}

// After a fatal error: a new librdkafka instance (Rebuild). After fencing,
// which Rebuild refuses, a new producer, as a restarted service would make:
// the coordinator fenced this one because its transaction timed out.
bool Recover(std::unique_ptr<TransactionalProducer>& p,
             const WorkloadOptions& w, WorkloadResult& result) {
  ++result.rebuilds;
  for (int i = 0; i < 20; ++i) {
    absl::Status s = p->Rebuild();
    if (s.ok()) return true;
    if (s.code() == absl::StatusCode::kFailedPrecondition) {
      result.epoch_bumps += static_cast<int64_t>(p->stats().epoch_bumps);
      p->Close().IgnoreError();
      absl::StatusOr<std::unique_ptr<TransactionalProducer>> fresh =
          CreateProducer(w);
      if (!fresh.ok()) {
        result.errors.push_back(absl::StrCat(
            "cannot replace a fenced producer: ", fresh.status().ToString()));
        return false;
      }
      p = std::move(*fresh);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  result.errors.push_back("rebuild kept failing");
  return false;
}

// The producer a workload runs with; null (the error in `result`) if it
// cannot be had.
std::unique_ptr<TransactionalProducer> Start(const WorkloadOptions& w,
                                             WorkloadResult& result) {
  absl::StatusOr<std::unique_ptr<TransactionalProducer>> created =
      CreateProducer(w);
  if (!created.ok()) {
    result.errors.push_back(created.status().ToString());
    return nullptr;
  }
  return std::move(*created);
}

// Closes the producer and hands the history and its counts to `result`.
void Finish(TransactionalProducer& p, const History& history,
            WorkloadResult& result) {
  p.Close().IgnoreError();
  result.attempts = history.attempts();
  result.epoch_bumps += static_cast<int64_t>(p.stats().epoch_bumps);
  result.rebuilds += static_cast<int64_t>(p.stats().rebuilds);
}

}  // namespace

WorkloadResult RunTransact(const WorkloadOptions& w) {
  WorkloadResult result;
  result.topics = {w.topic};
  Ready(w);
  History history;
  std::unique_ptr<TransactionalProducer> producer = Start(w, result);
  if (producer == nullptr) return result;
  Planner planner(w);
  const auto end = Clock::now() + w.duration;
  for (int64_t t = 0; t < w.transactions && Clock::now() < end; ++t) {
    TransactionalProducer& p = *producer;
    const Plan plan = planner.Next();
    int32_t attempt = 0;
    AttemptId current;
    const uint64_t aborted_before = p.stats().aborted;
    absl::Status s = p.Transact([&](Transaction& txn) -> absl::Status {
      // Transact runs fn again only after aborting the run before.
      if (attempt > 0) history.Finish(current, Outcome::kAborted);
      current = {.writer = w.writer, .txn = t, .attempt = ++attempt};
      history.Begin(current);
      std::string value;
      for (int32_t i = 0; i < plan.count; ++i) {
        absl::Status sent = txn.Send(
            RecordFor(w, current, i, plan.count, plan.partitions[i], value));
        if (!sent.ok()) return sent;
        history.Sent(current);
      }
      if (plan.abort_on_purpose) {
        std::this_thread::sleep_for(planner.Linger());
        return absl::AbortedError("aborted on purpose");
      }
      return absl::OkStatus();
    });
    if (attempt == 0) continue;  // never began: nothing sent
    if (s.ok()) {
      history.Finish(current, Outcome::kCommitted);
    } else if (p.in_transaction()) {
      history.Finish(current, Settle(p));
    } else if (p.stats().aborted > aborted_before + attempt - 1) {
      history.Finish(current, Outcome::kAborted);  // the last run's abort
    } else {
      history.Finish(current, Outcome::kUnknown);
      if (IsFatal(s) && !Recover(producer, w, result)) break;
    }
  }
  Finish(*producer, history, result);
  return result;
}

WorkloadResult RunVerbs(const WorkloadOptions& w) {
  WorkloadResult result;
  result.topics = {w.topic};
  Ready(w);
  History history;
  std::unique_ptr<TransactionalProducer> producer = Start(w, result);
  if (producer == nullptr) return result;
  Planner planner(w);
  // Repeats a verb while it fails with a retriable error.
  auto retried = [](auto call) {
    absl::Status s;
    for (int i = 0; i < 100; ++i) {
      s = call();
      if (s.ok() || NextTxnAction(s) != TxnAction::kRetry) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return s;
  };
  const auto end = Clock::now() + w.duration;
  for (int64_t t = 0; t < w.transactions && Clock::now() < end; ++t) {
    TransactionalProducer& p = *producer;
    const Plan plan = planner.Next();
    if (absl::Status s = retried([&] { return p.Begin(); }); !s.ok()) {
      if (IsFatal(s) && !Recover(producer, w, result)) break;
      continue;
    }
    const AttemptId id{.writer = w.writer, .txn = t, .attempt = 1};
    history.Begin(id);
    bool failed = false;
    std::string value;
    for (int32_t i = 0; i < plan.count && !failed; ++i) {
      failed =
          !p.Send(RecordFor(w, id, i, plan.count, plan.partitions[i], value))
               .ok();
      if (!failed) history.Sent(id);
    }
    if (failed || plan.abort_on_purpose) {
      std::this_thread::sleep_for(planner.Linger());
      absl::Status a = retried([&] { return p.Abort(); });
      history.Finish(id, a.ok() ? Outcome::kAborted : Outcome::kUnknown);
      if (!a.ok() && IsFatal(a) && !Recover(producer, w, result)) break;
      continue;
    }
    absl::Status c = retried([&] { return p.Commit(); });
    if (c.ok()) {
      history.Finish(id, Outcome::kCommitted);
    } else if (NextTxnAction(c) == TxnAction::kAbortAndRerun) {
      absl::Status a = retried([&] { return p.Abort(); });
      history.Finish(id, a.ok() ? Outcome::kAborted : Outcome::kUnknown);
      if (!a.ok() && IsFatal(a) && !Recover(producer, w, result)) break;
    } else {
      history.Finish(id, p.in_transaction() ? Settle(p) : Outcome::kUnknown);
      if (IsFatal(c) && !Recover(producer, w, result)) break;
    }
  }
  Finish(*producer, history, result);
  return result;
}

}  // namespace exactly::eos
