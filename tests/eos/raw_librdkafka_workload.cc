// The Verbs workload on librdkafka's own transactional API, without the SDK:
// to confirm the diagnosis of issue 16 independently of the SDK's code.
//
// librdkafka 2.0.2's rd_kafka_abort_transaction() purges queued retries and
// advances the partition's epoch base msgid past them
// (rd_kafka_toppar_purge_queues(), RD_KAFKA_PURGE_F_ABORT_TXN), also for a
// retry whose first send reached the broker and only lost its response. The
// next transaction then numbers new records with those sequences, and the
// broker acknowledges them as duplicates of the aborted batch. The
// workaround (what the SDK does): when an abort purged a record whose status
// is RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED, start a new epoch (a new handle,
// init_transactions) before the next transaction.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "eos/workload.h"

namespace exactly::eos {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTimeoutMs = 30000;

// Failed deliveries whose records may be on the broker: counted from the
// delivery reports, which rd_kafka_poll() serves.
std::atomic<int64_t> g_possibly_persisted{0};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR &&
      rd_kafka_message_status(m) == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED) {
    g_possibly_persisted.fetch_add(1, std::memory_order_relaxed);
  }
}

rd_kafka_t* NewProducer(const WorkloadOptions& w, std::string* error) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  const std::string txn_id = absl::StrCat(w.writer, "-raw");
  for (const auto& [k, v] :
       std::initializer_list<std::pair<const char*, std::string>>{
           {"bootstrap.servers", w.bootstrap_servers},
           {"transactional.id", txn_id},
           {"linger.ms", "2"},
           {"reconnect.backoff.ms", "10"},
           {"reconnect.backoff.max.ms", "200"},
           // librdkafka's default: a retry still waits in the queue when
           // the abort comes a few ms after the sends, as in issue 16.
           {"retry.backoff.ms", "100"},
           {"transaction.timeout.ms", "10000"}}) {
    if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      *error = err;
      rd_kafka_conf_destroy(conf);
      return nullptr;
    }
  }
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) {
    *error = err;
    rd_kafka_conf_destroy(conf);
    return nullptr;
  }
  for (int i = 0; i < 20; ++i) {
    rd_kafka_error_t* e = rd_kafka_init_transactions(rk, kTimeoutMs);
    if (e == nullptr) return rk;
    *error = rd_kafka_error_string(e);
    bool retriable = rd_kafka_error_is_retriable(e);
    rd_kafka_error_destroy(e);
    if (!retriable) break;
  }
  rd_kafka_destroy(rk);
  return nullptr;
}

// Calls a transactional API until it is not retriable; returns its error
// (null on success), owned by the caller.
template <class Call>
rd_kafka_error_t* Retried(Call call) {
  for (int i = 0;; ++i) {
    rd_kafka_error_t* e = call();
    if (e == nullptr || !rd_kafka_error_is_retriable(e) || i == 50) return e;
    rd_kafka_error_destroy(e);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

WorkloadResult Run(const WorkloadOptions& w, bool workaround) {
  WorkloadResult result;
  result.topics = {w.topic};
  Ready(w);
  History history;
  std::string error;
  rd_kafka_t* rk = NewProducer(w, &error);
  if (rk == nullptr) {
    result.errors.push_back("cannot create the producer: " + error);
    return result;
  }
  g_possibly_persisted = 0;
  std::mt19937_64 rng(w.seed);
  // Replaces the handle: a new producer epoch, sequences from 0.
  auto new_epoch = [&]() {
    rd_kafka_destroy(rk);
    rk = NewProducer(w, &error);
    ++result.epoch_bumps;
    if (rk == nullptr) return false;
    // As the SDK does: learn the topic's metadata now, not on librdkafka's
    // next periodic scan (up to a second later).
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, w.topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR)
      rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    return true;
  };
  const auto end = Clock::now() + w.duration;
  for (int64_t t = 0; t < w.transactions && Clock::now() < end; ++t) {
    rd_kafka_poll(rk, 0);  // delivery reports of the last transaction
    if (workaround && g_possibly_persisted.exchange(0) > 0 && !new_epoch()) {
      result.errors.push_back("cannot re-create the producer: " + error);
      break;
    }
    const int32_t count = std::uniform_int_distribution<int32_t>(
        w.min_records_per_transaction, w.max_records_per_transaction)(rng);
    const bool abort = std::bernoulli_distribution(w.abort_probability)(rng);
    if (rd_kafka_error_t* e = rd_kafka_begin_transaction(rk)) {
      result.errors.push_back(rd_kafka_error_string(e));
      rd_kafka_error_destroy(e);
      break;
    }
    const AttemptId id{.writer = w.writer, .txn = t, .attempt = 1};
    history.Begin(id);
    bool failed = false;
    for (int32_t i = 0; i < count && !failed; ++i) {
      const int32_t partition = w.round_robin_partitions
                                    ? i % w.partitions
                                    : std::uniform_int_distribution<int32_t>(
                                          0, w.partitions - 1)(rng);
      std::string value =
          EncodeValue({.attempt = id, .index = i, .count = count});
      failed = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(w.topic.c_str()),
                                 RD_KAFKA_V_PARTITION(partition),
                                 RD_KAFKA_V_VALUE(value.data(), value.size()),
                                 RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                 RD_KAFKA_V_END) != RD_KAFKA_RESP_ERR_NO_ERROR;
      if (!failed) history.Sent(id);
    }
    rd_kafka_error_t* e = nullptr;
    bool committed = false;
    if (!failed && !abort) {
      e = Retried([&] { return rd_kafka_commit_transaction(rk, kTimeoutMs); });
      committed = e == nullptr;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(
          std::uniform_int_distribution<int>(0, 8)(rng)));
    }
    if (committed) {
      history.Finish(id, Outcome::kCommitted);
      continue;
    }
    if (e == nullptr || rd_kafka_error_txn_requires_abort(e)) {
      if (e != nullptr) rd_kafka_error_destroy(e);
      // In short slices, as the SDK does: records that a dying connection
      // puts back in the queue during the abort are purged by the next call
      // instead of holding this one for its whole timeout.
      e = Retried([&] { return rd_kafka_abort_transaction(rk, 200); });
      history.Finish(id, e == nullptr ? Outcome::kAborted : Outcome::kUnknown);
    } else {
      history.Finish(id, Outcome::kUnknown);
    }
    if (e != nullptr) {
      // Fatal, or an abort that did not finish: only a new handle goes on.
      rd_kafka_error_destroy(e);
      if (!new_epoch()) {
        result.errors.push_back("cannot re-create the producer: " + error);
        break;
      }
    }
  }
  if (rk != nullptr) rd_kafka_destroy(rk);
  result.attempts = history.attempts();
  return result;
}

}  // namespace

WorkloadResult RunRawLibrdkafka(const WorkloadOptions& w) {
  return Run(w, /*workaround=*/false);
}

WorkloadResult RunRawLibrdkafkaWithWorkaround(const WorkloadOptions& w) {
  return Run(w, /*workaround=*/true);
}

}  // namespace exactly::eos
