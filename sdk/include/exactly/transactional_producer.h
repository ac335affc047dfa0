// The transactional producer: records (and consumer offsets) become visible
// to read_committed consumers all together, or not at all.
//
// Transact(fn) is the one obvious way to use it; it applies librdkafka's
// documented rules so that the caller does not have to:
//   - a retriable error is retried (the same call again, after a pause);
//   - an abortable error aborts the transaction and runs fn again, at most
//     retry.max_attempts times, with back-off;
//   - a fatal error (or one with neither flag) is returned.
// After a fatal error the producer is unusable; Rebuild() replaces it with a
// fresh instance, unless it was fenced (another instance with the same
// transactional.id took over, which is final).
//
// Not thread-safe: one thread drives the transactions (delivery callbacks run
// on the SDK's delivery thread). Only stats() and producer_stats() may be
// called from other threads, until Close() (or the destructor) begins.
#ifndef EXACTLY_TRANSACTIONAL_PRODUCER_H_
#define EXACTLY_TRANSACTIONAL_PRODUCER_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/group_metadata.h"
#include "exactly/options.h"
#include "exactly/producer.h"
#include "exactly/record.h"

namespace exactly {

namespace internal {
class ProducerCore;
class ProducerAccess;
}  // namespace internal

class TransactionalProducer;

// The open transaction, as Transact() hands it to its function.
class Transaction {
 public:
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  absl::Status Send(const Record& record);
  absl::Status Send(const Record& record, DeliveryCallback on_delivery);
  // Commits `offsets` to the consumer group of `group` if, and only if, the
  // transaction commits. Retriable errors are retried here.
  absl::Status SendOffsets(const std::vector<TopicPartitionOffset>& offsets,
                           const ConsumerGroupMetadata& group);

 private:
  friend class TransactionalProducer;
  explicit Transaction(TransactionalProducer* producer) : producer_(producer) {}
  TransactionalProducer* producer_;
};

// The upper bounds of TransactionStats::commit_latency_counts' buckets.
inline constexpr std::array<std::chrono::microseconds, 12>
    kCommitLatencyBounds = {std::chrono::microseconds(1000),
                            std::chrono::microseconds(2500),
                            std::chrono::microseconds(5000),
                            std::chrono::microseconds(10000),
                            std::chrono::microseconds(25000),
                            std::chrono::microseconds(50000),
                            std::chrono::microseconds(100000),
                            std::chrono::microseconds(250000),
                            std::chrono::microseconds(500000),
                            std::chrono::microseconds(1000000),
                            std::chrono::microseconds(2500000),
                            std::chrono::microseconds(10000000)};

// Why a transaction was aborted (TransactionStats::aborted_by_cause).
enum class AbortCause {
  kRequested,       // Abort() called by the application
  kError,           // Transact: fn's own error (or exception), or an error
                    // with neither Kafka flag, which Transact returns
  kAbortableError,  // Transact: an abortable Kafka error (or a retriable
                    // one inside fn); fn runs again
  kClose,           // Close() aborted the transaction left open
};
inline constexpr size_t kAbortCauseCount = 4;
// Their names, indexed by the enum: the "cause" label in Prometheus.
inline constexpr std::array<std::string_view, kAbortCauseCount>
    kAbortCauseNames = {"requested", "error", "abortable_error", "close"};

struct TransactionStats {
  uint64_t committed = 0;  // transactions committed
  uint64_t aborted = 0;    // transactions aborted (by Abort() or Transact)
  // aborted, by AbortCause (indexed by the enum; they add up to aborted).
  std::array<uint64_t, kAbortCauseCount> aborted_by_cause{};
  uint64_t reruns = 0;    // times Transact ran fn again after an abort
  uint64_t retries = 0;   // calls repeated after a retriable error
  uint64_t rebuilds = 0;  // Rebuild() calls that succeeded
  // Transactions begun with a new producer epoch because the one before was
  // aborted after a record of it failed once sent (see Begin()).
  uint64_t epoch_bumps = 0;
  // How long each Commit() call that committed took (the call that
  // completed the commit, when an earlier one timed out): counts[i] of them
  // took more than kCommitLatencyBounds[i - 1] and at most
  // kCommitLatencyBounds[i]; the last element, more than every bound.
  std::array<uint64_t, kCommitLatencyBounds.size() + 1> commit_latency_counts{};
  std::chrono::microseconds commit_latency_sum{0};
  // This instance was fenced by a newer one with the same transactional.id
  // (final: Rebuild() is refused).
  bool fenced = false;
};

class TransactionalProducer {
 public:
  // Requires options.transactional_id. Initialises transactions (fencing any
  // older instance with the same id), retrying retriable errors.
  static absl::StatusOr<std::unique_ptr<TransactionalProducer>> Create(
      const ProducerOptions& options);
  ~TransactionalProducer();  // Close(kDefaultCloseTimeout)

  // Begins a transaction, runs fn, commits; see the rules above. fn may run
  // more than once: only the run that commits is visible. An error fn
  // returns itself (one without Kafka flags) aborts the transaction and is
  // returned as it is; so is an exception fn throws, as INTERNAL.
  absl::Status Transact(absl::FunctionRef<absl::Status(Transaction&)> fn);

  // The single verbs, one librdkafka call each; the status carries the
  // flags (see NextTxnAction() in exactly/error.h).
  //
  // Begin() may first start a new producer epoch (a new librdkafka instance
  // and init_transactions, a few milliseconds): it does so when a record of
  // an aborted transaction failed after it was sent (possibly written, or
  // refused by the broker). librdkafka purges a possibly written record on
  // abort and numbers the next batch as if it had never been sent, so a
  // broker that had it would take the next transaction's records for retried
  // duplicates of it and drop them; after a refused batch the numbering has
  // a gap that can turn fatal (see the README, "Aborts and lost responses").
  // A new epoch starts the sequence numbers afresh. A retriable error from it
  // is returned as such.
  absl::Status Begin();
  absl::Status Send(const Record& record);
  absl::Status Send(const Record& record, DeliveryCallback on_delivery);
  absl::Status SendOffsets(const std::vector<TopicPartitionOffset>& offsets,
                           const ConsumerGroupMetadata& group);
  absl::Status Commit();
  // Aborts the open transaction. When the coordinator answers that there is
  // none to abort (INVALID_TXN_STATE: librdkafka sent EndTxn although no
  // partition was added), which librdkafka makes fatal, Abort() replaces the
  // instance (as Rebuild()) and returns OK: nothing of it was written.
  absl::Status Abort();

  // Replaces the librdkafka producer with a new one and initialises
  // transactions again. Refused after fencing (FAILED_PRECONDITION).
  absl::Status Rebuild();

  // Aborts an open transaction (so that it does not hold back read_committed
  // consumers until the coordinator's timeout), flushes and closes, all
  // within about `timeout`: an abort that cannot finish in it is left to the
  // coordinator, which aborts the transaction when transaction.timeout.ms
  // runs out. Later calls return OK.
  absl::Status Close(std::chrono::milliseconds timeout = kDefaultCloseTimeout);

  bool in_transaction() const { return in_transaction_; }
  const std::string& transactional_id() const;
  TransactionStats stats() const;
  ProducerStats producer_stats() const;

 private:
  friend class Transaction;
  friend class internal::ProducerAccess;

  TransactionalProducer(const ProducerOptions& options,
                        std::unique_ptr<internal::ProducerCore> core);
  absl::Status InitTransactions();
  // Abort(), counted under `cause`, taking at most `limit` when given
  // (AbortTimeout() otherwise).
  absl::Status AbortFor(
      AbortCause cause,
      std::optional<std::chrono::milliseconds> limit = std::nullopt);
  // A new librdkafka instance (the old one closed at once); the caller then
  // initialises transactions on it, which also starts a new epoch.
  absl::Status ReplaceCore();
  // Whether records of this epoch failed after they were sent: the next
  // transaction must not go on with this epoch's sequence numbers.
  bool EpochIsSpoiled() const;
  absl::Status StartNewEpoch();
  absl::Status SendInTransaction(const Record& record,
                                 DeliveryCallback on_delivery);
  // Repeats `call` while it fails with a retriable error (bounded, with
  // back-off); returns its last status.
  absl::Status RetryRetriable(absl::FunctionRef<absl::Status()> call);
  // Remembers a fatal error so that Rebuild() knows whether it may.
  absl::Status Track(absl::Status status);
  int TimeoutMs() const;
  // Adds `n` to the counter `field` of stats_.
  void Count(uint64_t TransactionStats::*field, uint64_t n = 1);
  // How long Abort() may take in all.
  std::chrono::milliseconds AbortTimeout() const;

  const ProducerOptions options_;
  std::unique_ptr<internal::ProducerCore> core_;
  bool in_transaction_ = false;
  // core_ is a new instance whose init_transactions has not completed.
  bool needs_init_ = false;
  // Topics sent to, so that a new instance learns their metadata at once
  // (else its first transaction waits up to a second for librdkafka's scan).
  std::set<std::string, std::less<>> topics_;
  std::string last_topic_;
  absl::Status fatal_;
  // Guards stats_, and core_ against producer_stats() on other threads (the
  // driving thread reads core_ without it: only that thread replaces it).
  mutable std::mutex stats_mu_;
  TransactionStats stats_;
};

}  // namespace exactly

#endif  // EXACTLY_TRANSACTIONAL_PRODUCER_H_
