// The transactional producer and Transact(): librdkafka's documented error
// rules (rdkafka.h, "Transactional producer API"; examples/transactions.c)
// applied in one place.
#include "exactly/transactional_producer.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/callback_guard.h"
#include "client/retry.h"
#include "exactly/error.h"
#include "producer/producer_access.h"
#include "producer/producer_core.h"

namespace exactly {

using internal::TakeError;

namespace {
// One abort_transaction call's wait (see Abort()).
constexpr std::chrono::milliseconds kAbortSlice{200};
}  // namespace

// --- Transaction -----------------------------------------------------------

absl::Status Transaction::Send(const Record& record) {
  return producer_->SendInTransaction(record, nullptr);
}

absl::Status Transaction::Send(const Record& record,
                               DeliveryCallback on_delivery) {
  return producer_->SendInTransaction(record, std::move(on_delivery));
}

absl::Status Transaction::SendOffsets(
    const std::vector<TopicPartitionOffset>& offsets,
    const ConsumerGroupMetadata& group) {
  // librdkafka asks for a retry with the very same offsets and metadata.
  return producer_->RetryRetriable(
      [&] { return producer_->SendOffsets(offsets, group); });
}

// --- TransactionalProducer -------------------------------------------------

absl::StatusOr<std::unique_ptr<TransactionalProducer>>
TransactionalProducer::Create(const ProducerOptions& options) {
  if (options.transactional_id.empty() &&
      options.properties.count("transactional.id") == 0) {
    return absl::InvalidArgumentError(
        "transactional.id is required (options.transactional_id): it "
        "identifies this producer across restarts, so that a newer instance "
        "fences an older one");
  }
  absl::StatusOr<std::unique_ptr<internal::ProducerCore>> core =
      internal::ProducerCore::Create(options);
  if (!core.ok()) return core.status();
  std::unique_ptr<TransactionalProducer> producer(
      new TransactionalProducer(options, std::move(*core)));
  if (absl::Status s = producer->InitTransactions(); !s.ok()) return s;
  return producer;
}

TransactionalProducer::TransactionalProducer(
    const ProducerOptions& options,
    std::unique_ptr<internal::ProducerCore> core)
    : options_(options), core_(std::move(core)) {}

TransactionalProducer::~TransactionalProducer() {
  Close(kDefaultCloseTimeout).IgnoreError();
}

const std::string& TransactionalProducer::transactional_id() const {
  return options_.transactional_id;
}

int TransactionalProducer::TimeoutMs() const {
  return internal::ToTimeoutMs(options_.transaction_call_timeout);
}

absl::Status TransactionalProducer::Track(absl::Status status) {
  if (IsFatal(status)) {
    if (fatal_.ok()) fatal_ = status;
    in_transaction_ = false;
    if (IsFenced(status)) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.fenced = true;
    }
  }
  return status;
}

void TransactionalProducer::Count(uint64_t TransactionStats::*field,
                                  uint64_t n) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.*field += n;
}

absl::Status TransactionalProducer::RetryRetriable(
    absl::FunctionRef<absl::Status()> call) {
  uint64_t retries = 0;
  absl::Status status =
      internal::RetryWhileRetriable(options_.retry, call, &retries);
  if (retries != 0) Count(&TransactionStats::retries, retries);
  return status;
}

absl::Status TransactionalProducer::InitTransactions() {
  absl::Status status = RetryRetriable([&] {
    // Refused credentials stop the retries: they would fail the same way.
    return Track(core_->ExplainAuthenticationFailure(
        TakeError(rd_kafka_init_transactions(core_->rk(), TimeoutMs()),
                  "init_transactions")));
  });
  needs_init_ = !status.ok();
  return status;
}

absl::Status TransactionalProducer::ReplaceCore() {
  // The old instance's records are lost with it (their callbacks report
  // CANCELLED); its open transaction is aborted by the new instance's init.
  // Taken out of producer_stats()'s reach while it closes.
  std::unique_ptr<internal::ProducerCore> old;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    old = std::move(core_);
  }
  old->Close(std::chrono::milliseconds(0)).IgnoreError();
  absl::StatusOr<std::unique_ptr<internal::ProducerCore>> core =
      internal::ProducerCore::Create(options_);
  std::lock_guard<std::mutex> lock(stats_mu_);
  if (!core.ok()) {
    core_ = std::move(old);
    return core.status();
  }
  core_ = std::move(*core);
  fatal_ = absl::OkStatus();
  in_transaction_ = false;
  needs_init_ = true;
  return absl::OkStatus();
}

bool TransactionalProducer::EpochIsSpoiled() const {
  // Records failed after they were sent, so librdkafka and the broker may
  // disagree on the next sequence number:
  // - possibly written, then purged by an abort (or by librdkafka on an
  //   abortable error): rd_kafka_toppar_purge_queues() moved the partition's
  //   sequence base past them as if never sent. The next batch would reuse
  //   their sequences and, if the broker has them, be acknowledged as their
  //   duplicate, its own records never stored;
  // - refused by the broker: librdkafka does not reuse their sequences, the
  //   broker answers the next batch OUT_OF_ORDER_SEQUENCE_NUMBER, and if that
  //   answer is lost librdkafka reads its retry as a rewound sequence: fatal.
  // Committed transactions have no failed records: only aborts count.
  return core_->failures_after_send() != 0;
}

absl::Status TransactionalProducer::StartNewEpoch() {
  if (!needs_init_) {
    if (absl::Status s = ReplaceCore(); !s.ok()) return s;
  }
  absl::Status status = InitTransactions();
  if (!status.ok()) return status;
  Count(&TransactionStats::epoch_bumps);
  // Best effort: without it the first record of each topic just waits.
  internal::WarmUpTopics(core_->rk(), topics_, std::chrono::seconds(5))
      .IgnoreError();
  return status;
}

absl::Status TransactionalProducer::Begin() {
  if (core_->rk() == nullptr) {
    return absl::FailedPreconditionError("the producer is closed");
  }
  if (!fatal_.ok()) return fatal_;
  if (!in_transaction_ && (needs_init_ || EpochIsSpoiled())) {
    if (absl::Status s = StartNewEpoch(); !s.ok()) return s;
  }
  absl::Status status = Track(
      TakeError(rd_kafka_begin_transaction(core_->rk()), "begin_transaction"));
  if (status.ok()) in_transaction_ = true;
  return status;
}

absl::Status TransactionalProducer::Send(const Record& record) {
  return SendInTransaction(record, nullptr);
}

absl::Status TransactionalProducer::Send(const Record& record,
                                         DeliveryCallback on_delivery) {
  return SendInTransaction(record, std::move(on_delivery));
}

absl::Status TransactionalProducer::SendInTransaction(
    const Record& record, DeliveryCallback on_delivery) {
  if (!fatal_.ok()) return fatal_;
  if (!in_transaction_) {
    return absl::FailedPreconditionError(
        "no open transaction: call Begin() first, or use Transact()");
  }
  std::unique_ptr<internal::CallbackDelivery> pending;
  if (on_delivery) {
    pending =
        std::make_unique<internal::CallbackDelivery>(std::move(on_delivery));
  }
  absl::Status status = core_->Send(record, pending.get());
  if (status.ok()) {
    pending.release();  // the core completes and deletes it
    if (record.topic != last_topic_) {
      last_topic_ = record.topic;
      topics_.insert(last_topic_);
    }
    return status;
  }
  // Inside a transaction librdkafka refuses new records (_STATE) once the
  // transaction has failed: that is its abortable state, unless the
  // producer as a whole is dead.
  if (KafkaErrorCode(status) == RD_KAFKA_RESP_ERR__STATE) {
    if (absl::Status fatal = internal::FatalStatus(core_->rk()); !fatal.ok()) {
      return Track(fatal);
    }
    KafkaError error = *GetKafkaError(status);
    error.txn_requires_abort = true;
    status = MakeKafkaStatus(
        error, absl::StrCat(status.message(),
                            " (the transaction has failed: abort it)"));
  }
  return Track(status);
}

absl::Status TransactionalProducer::SendOffsets(
    const std::vector<TopicPartitionOffset>& offsets,
    const ConsumerGroupMetadata& group) {
  if (!fatal_.ok()) return fatal_;
  if (!in_transaction_) {
    return absl::FailedPreconditionError(
        "no open transaction: call Begin() first, or use Transact()");
  }
  internal::PartitionListPtr list = internal::ToPartitionList(offsets);
  return Track(TakeError(
      rd_kafka_send_offsets_to_transaction(core_->rk(), list.get(),
                                           group.native_handle(), TimeoutMs()),
      "send_offsets_to_transaction"));
}

absl::Status TransactionalProducer::Commit() {
  if (!fatal_.ok()) return fatal_;
  if (core_->rk() == nullptr) {
    return absl::FailedPreconditionError("the producer is closed");
  }
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = Track(TakeError(core_->Draining([&] {
    return rd_kafka_commit_transaction(core_->rk(), TimeoutMs());
  }),
                                        "commit_transaction"));
  if (status.ok()) {
    in_transaction_ = false;
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    const size_t bucket = std::lower_bound(kCommitLatencyBounds.begin(),
                                           kCommitLatencyBounds.end(), took) -
                          kCommitLatencyBounds.begin();
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.committed;
    ++stats_.commit_latency_counts[bucket];
    stats_.commit_latency_sum += took;
  }
  return status;
}

absl::Status TransactionalProducer::Abort() {
  return AbortFor(AbortCause::kRequested);
}

absl::Status TransactionalProducer::AbortFor(
    AbortCause cause, std::optional<std::chrono::milliseconds> limit) {
  if (!fatal_.ok()) return fatal_;
  if (core_->rk() == nullptr) {
    return absl::FailedPreconditionError("the producer is closed");
  }
  // In slices: abort_transaction purges what is queued, then waits for the
  // requests in flight. A request whose connection dies meanwhile puts its
  // records back in the queue, where nothing sends them while the abort
  // runs: a single call would wait out its whole timeout (the transaction's
  // remaining time, 60 s by default) for them. Calling again purges them.
  const auto deadline =
      std::chrono::steady_clock::now() +
      (limit ? std::min(*limit, AbortTimeout()) : AbortTimeout());
  absl::Status status;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const auto slice =
        std::clamp(left, std::chrono::milliseconds(1), kAbortSlice);
    status = Track(TakeError(core_->Draining([&] {
      return rd_kafka_abort_transaction(core_->rk(),
                                        static_cast<int>(slice.count()));
    }),
                             "abort_transaction"));
    if (KafkaErrorCode(status) != RD_KAFKA_RESP_ERR__TIMED_OUT ||
        std::chrono::steady_clock::now() >= deadline) {
      break;
    }
  }
  if (KafkaErrorCode(status) == RD_KAFKA_RESP_ERR_INVALID_TXN_STATE &&
      !IsFenced(status)) {
    // librdkafka sends EndTxn(abort) even when the coordinator refused the
    // transaction's only AddPartitionsToTxn (it counts a request answered
    // with a partition error as registered). The coordinator has no
    // transaction to abort and answers INVALID_TXN_STATE (Kafka before 4.0,
    // and the bundled broker), which librdkafka makes fatal. Nothing of the
    // transaction was written: a fresh instance goes on where it stopped.
    // (librdkafka refuses to abort once EndTxn(commit) was sent, so this is
    // never a transaction whose commit was accepted.)
    if (Rebuild().ok()) status = absl::OkStatus();
  }
  if (status.ok()) {
    in_transaction_ = false;
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.aborted;
    ++stats_.aborted_by_cause[static_cast<size_t>(cause)];
  }
  return status;
}

std::chrono::milliseconds TransactionalProducer::AbortTimeout() const {
  if (options_.transaction_call_timeout.count() >= 0) {
    return options_.transaction_call_timeout;
  }
  // librdkafka's -1: what is left of the transaction; at most all of it.
  int64_t ms = 60000;  // transaction.timeout.ms's default
  if (auto it = options_.properties.find("transaction.timeout.ms");
      it != options_.properties.end()) {
    if (!absl::SimpleAtoi(it->second, &ms)) ms = 60000;
  }
  return std::chrono::milliseconds(ms);
}

absl::Status TransactionalProducer::Transact(
    absl::FunctionRef<absl::Status(Transaction&)> fn) {
  if (!fatal_.ok()) return fatal_;
  if (in_transaction_) {
    return absl::FailedPreconditionError(
        "a transaction is already open: Commit() or Abort() it first");
  }
  internal::Backoff backoff(options_.retry);
  absl::Status last;
  for (int attempt = 1; attempt <= options_.retry.max_attempts; ++attempt) {
    if (attempt > 1) {
      backoff.Sleep();
      Count(&TransactionStats::reruns);
    }
    if (absl::Status s = RetryRetriable([&] { return Begin(); }); !s.ok()) {
      return s;
    }

    Transaction txn(this);
    absl::Status status;
    absl::Status thrown =
        internal::CallUser("transaction function", [&] { status = fn(txn); });
    if (!thrown.ok()) status = thrown;

    bool committing = false;
    if (status.ok()) {
      committing = true;
      status = RetryRetriable([&] { return Commit(); });
      if (status.ok()) return status;
    }

    const TxnAction action = NextTxnAction(status);
    // A Kafka error inside fn that is retriable cannot be resumed in place:
    // the work fn did is redone in a new transaction.
    const bool rerun = action == TxnAction::kAbortAndRerun ||
                       (!committing && action == TxnAction::kRetry);
    if (rerun) {
      if (absl::Status a = RetryRetriable(
              [&] { return AbortFor(AbortCause::kAbortableError); });
          !a.ok()) {
        return a;
      }
      last = status;
      continue;
    }
    if (committing && action == TxnAction::kRetry) {
      // Retries exhausted while committing: the commit may still complete
      // in the background; Commit() resumes it.
      return status;
    }
    // Fatal, neither flag, or fn's own error: abort (unless the producer is
    // dead) and surface the error.
    if (in_transaction_) {
      if (absl::Status a =
              RetryRetriable([&] { return AbortFor(AbortCause::kError); });
          !a.ok()) {
        internal::ReportError(options_.on_error, a);
      }
    }
    return status;
  }
  return internal::WithContext(
      last, absl::StrCat("transaction aborted ", options_.retry.max_attempts,
                         " times, giving up; the last error"));
}

absl::Status TransactionalProducer::Rebuild() {
  absl::Status fatal = fatal_;
  if (fatal.ok() && core_->rk() != nullptr) {
    fatal = internal::FatalStatus(core_->rk());
  }
  if (IsFenced(fatal)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "not rebuilding: transactional.id \"", options_.transactional_id,
        "\" was fenced by a newer instance, which rebuilding would fence in "
        "turn (",
        fatal.message(), ")"));
  }
  if (absl::Status s = ReplaceCore(); !s.ok()) return s;
  absl::Status status = InitTransactions();
  if (status.ok()) Count(&TransactionStats::rebuilds);
  return status;
}

absl::Status TransactionalProducer::Close(std::chrono::milliseconds timeout) {
  if (core_->rk() == nullptr) return absl::OkStatus();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (in_transaction_ && fatal_.ok()) {
    // Left open, the transaction would hold back read_committed consumers
    // until the coordinator times it out.
    AbortFor(AbortCause::kClose, timeout).IgnoreError();
  }
  return core_->Close(
      std::max(std::chrono::milliseconds(0),
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   deadline - std::chrono::steady_clock::now())));
}

TransactionStats TransactionalProducer::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

ProducerStats TransactionalProducer::producer_stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  // Null only while ReplaceCore() closes the old instance.
  return core_ != nullptr ? core_->stats() : ProducerStats{};
}

}  // namespace exactly
