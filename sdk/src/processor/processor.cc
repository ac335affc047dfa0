// The processor: a consumer and a transactional producer driven as in
// librdkafka's examples/transactions.c, with the error rules applied and the
// batch kept in memory so that an aborted batch is transformed again without
// rewinding the consumer.
//
// A batch's transaction begins at its first record; each record is
// transformed as it arrives (its outputs go out while polling continues).
// At the end of the batch the inputs' next offsets are sent to the
// transaction with the consumer's group metadata, and the transaction
// commits. If anything aborts the transaction (an abortable error, or a
// revocation of partitions it read), the inputs still held are transformed
// again in a new transaction.
#include "exactly/processor.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/callback_guard.h"
#include "client/options_internal.h"
#include "client/rdkafka_util.h"
#include "client/retry.h"
#include "exactly/consumer.h"
#include "exactly/error.h"
#include "exactly/transactional_producer.h"

namespace exactly {
namespace {

// An error a new transaction may not repeat: retry the batch.
bool Recoverable(const absl::Status& status) {
  const TxnAction action = NextTxnAction(status);
  return action == TxnAction::kAbortAndRerun || action == TxnAction::kRetry;
}

bool SamePartition(const Message& m, const TopicPartition& tp) {
  return m.partition() == tp.partition && m.topic() == tp.topic;
}

}  // namespace

class Processor::Impl final : public Emitter {
 public:
  Impl(const ProcessorOptions& options, Transform transform)
      : options_(options), transform_(std::move(transform)) {}
  // Closes the consumer while the batch it may call back into still exists.
  ~Impl() { Close().IgnoreError(); }

  absl::Status Init();
  absl::Status RunOnce();
  void Stop() { stop_.store(true); }
  bool stopping() const { return stop_.load(); }
  ProcessorStats stats() const {
    std::lock_guard<std::mutex> lock(stats_mu_);
    return stats_;
  }
  absl::Status Close();

  // Emitter: into the batch's transaction.
  absl::Status Send(const Record& record) override {
    absl::Status status = producer_->Send(record);
    if (status.ok()) ++outputs_in_txn_;
    return status;
  }

  // From the consumer's rebalance listener, inside Poll (or Close).
  void OnAssigned(const std::vector<TopicPartition>& partitions);
  void OnRevoked(const std::vector<TopicPartition>& partitions);

 private:
  class Listener;

  absl::Status Accept(Message message);
  absl::Status CommitBatch();
  absl::Status HandleFailure(const absl::Status& status);
  absl::Status Replay();
  absl::Status BeginTransaction();
  absl::Status AbortOpenTransaction(ProcessorAbortCause cause);
  absl::Status TransformOne(const Message& input);
  std::vector<TopicPartitionOffset> NextOffsets() const;
  absl::Status Retry(absl::FunctionRef<absl::Status()> call) {
    return internal::RetryWhileRetriable(options_.retry, call, &retries_);
  }

  const ProcessorOptions options_;
  const Transform transform_;
  std::unique_ptr<TransactionalProducer> producer_;
  std::unique_ptr<Consumer> consumer_;

  // The current batch.
  std::vector<Message> inputs_;
  uint64_t outputs_in_txn_ = 0;
  bool replay_needed_ = false;  // its transaction failed: transform again
  bool committing_ = false;     // a commit timed out: resume it
  int failed_attempts_ = 0;     // consecutive aborted attempts

  absl::Status fatal_;
  std::atomic<bool> stop_{false};
  bool closed_ = false;
  uint64_t retries_ = 0;
  mutable std::mutex stats_mu_;  // stats() may be read from other threads
  ProcessorStats stats_;
};

class Processor::Impl::Listener final : public RebalanceListener {
 public:
  explicit Listener(Impl* impl) : impl_(impl) {}
  void OnAssigned(const std::vector<TopicPartition>& partitions) override {
    impl_->OnAssigned(partitions);
  }
  void OnRevoked(const std::vector<TopicPartition>& partitions) override {
    impl_->OnRevoked(partitions);
  }

 private:
  Impl* impl_;
};

absl::Status Processor::Impl::Init() {
  // The producer first: initialising its transactions fences an older
  // instance with the same transactional.id and aborts what it left open,
  // before this one reads any offset.
  absl::StatusOr<std::unique_ptr<TransactionalProducer>> producer =
      TransactionalProducer::Create(internal::ProducerOptionsFor(options_));
  if (!producer.ok()) return producer.status();
  producer_ = std::move(*producer);
  absl::StatusOr<std::unique_ptr<Consumer>> consumer =
      Consumer::Create(internal::ConsumerOptionsFor(options_));
  if (!consumer.ok()) return consumer.status();
  consumer_ = std::move(*consumer);
  return consumer_->Subscribe(options_.input_topics,
                              std::make_shared<Listener>(this));
}

absl::Status Processor::Impl::RunOnce() {
  if (closed_) return absl::FailedPreconditionError("the processor is closed");
  if (!fatal_.ok()) return fatal_;
  // A commit that timed out is resumed before anything else joins the batch.
  if (committing_) return CommitBatch();
  using Clock = std::chrono::steady_clock;
  // A batch left over from a failed attempt is committed after one quick
  // poll, which serves any pending rebalance first.
  Clock::time_point deadline =
      inputs_.empty() ? Clock::now() + options_.max_batch_time : Clock::now();
  bool batch_started = !inputs_.empty();
  do {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    const auto wait = std::clamp(left, std::chrono::milliseconds(0),
                                 std::chrono::milliseconds(100));
    absl::StatusOr<std::optional<Message>> polled = consumer_->Poll(wait);
    if (!fatal_.ok()) return fatal_;  // set while handling a revocation
    if (!polled.ok()) return polled.status();
    if (!polled->has_value()) continue;
    if (!batch_started) {
      batch_started = true;
      deadline = Clock::now() + options_.max_batch_time;
    }
    if (absl::Status s = Accept(std::move(**polled)); !s.ok()) return s;
  } while (!stop_.load() && inputs_.size() < options_.max_batch_records &&
           Clock::now() < deadline);
  return CommitBatch();
}

absl::Status Processor::Impl::Accept(Message message) {
  inputs_.push_back(std::move(message));
  // A doomed transaction takes no more output; the batch is transformed
  // again at commit time.
  if (replay_needed_) return absl::OkStatus();
  if (!producer_->in_transaction()) {
    if (absl::Status s = BeginTransaction(); !s.ok()) return s;
  }
  absl::Status status = TransformOne(inputs_.back());
  if (status.ok()) return status;
  if (Recoverable(status)) {
    replay_needed_ = true;
    return absl::OkStatus();
  }
  // The transform's own error (or a fatal one): keep the inputs, so that
  // nothing of this batch is committed before they are transformed again.
  replay_needed_ = true;
  if (!IsFatal(status)) {
    if (absl::Status a = AbortOpenTransaction(ProcessorAbortCause::kError);
        !a.ok()) {
      return a;
    }
  } else {
    fatal_ = status;
  }
  return status;
}

absl::Status Processor::Impl::CommitBatch() {
  if (inputs_.empty()) {
    // Everything was revoked: nothing of this batch may be committed.
    replay_needed_ = false;
    return AbortOpenTransaction(ProcessorAbortCause::kRevoked);
  }
  if (replay_needed_) {
    if (absl::Status s = Replay(); !s.ok()) return HandleFailure(s);
  }
  if (!committing_) {
    const std::vector<TopicPartitionOffset> offsets = NextOffsets();
    absl::StatusOr<ConsumerGroupMetadata> group = consumer_->GroupMetadata();
    if (!group.ok()) return group.status();
    absl::Status s =
        Retry([&] { return producer_->SendOffsets(offsets, *group); });
    if (!s.ok()) return HandleFailure(s);
    committing_ = true;
  }
  absl::Status s = Retry([&] { return producer_->Commit(); });
  if (NextTxnAction(s) == TxnAction::kRetry) {
    return s;  // still committing in the background: resumed next time
  }
  committing_ = false;
  if (!s.ok()) return HandleFailure(s);

  std::vector<TopicPartitionOffset> offsets = NextOffsets();
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.records_in += inputs_.size();
    stats_.records_out += outputs_in_txn_;
    ++stats_.transactions_committed;
    const size_t bucket =
        std::lower_bound(kBatchSizeBounds.begin(), kBatchSizeBounds.end(),
                         inputs_.size()) -
        kBatchSizeBounds.begin();
    ++stats_.batch_size_counts[bucket];
    for (TopicPartitionOffset& o : offsets) {
      auto it = std::find_if(
          stats_.committed_offsets.begin(), stats_.committed_offsets.end(),
          [&](const TopicPartitionOffset& c) {
            return c.topic == o.topic && c.partition == o.partition;
          });
      if (it == stats_.committed_offsets.end()) {
        stats_.committed_offsets.push_back(std::move(o));
      } else {
        it->offset = o.offset;
      }
    }
  }
  inputs_.clear();
  outputs_in_txn_ = 0;
  failed_attempts_ = 0;
  return absl::OkStatus();
}

absl::Status Processor::Impl::HandleFailure(const absl::Status& status) {
  if (IsFatal(status)) {
    fatal_ = status;
    return status;
  }
  const bool recoverable = Recoverable(status);
  if (absl::Status a = AbortOpenTransaction(
          recoverable ? ProcessorAbortCause::kAbortableError
                      : ProcessorAbortCause::kError);
      !a.ok()) {
    return a;
  }
  replay_needed_ = true;
  if (!recoverable) return status;
  if (++failed_attempts_ >= options_.retry.max_attempts) {
    return internal::WithContext(
        status, absl::StrCat("batch aborted ", failed_attempts_,
                             " times in a row, giving up; the last error"));
  }
  // Back off, then let the next RunOnce poll (a rebalance that caused this
  // is then served) and commit the batch again.
  auto pause = options_.retry.initial_backoff *
               (1 << std::min(failed_attempts_ - 1, 16));
  std::this_thread::sleep_for(std::min(pause, options_.retry.max_backoff));
  return absl::OkStatus();
}

absl::Status Processor::Impl::Replay() {
  // A transaction still open here was doomed by an abortable error (the
  // other causes abort at once).
  if (absl::Status s =
          AbortOpenTransaction(ProcessorAbortCause::kAbortableError);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = BeginTransaction(); !s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.batches_replayed;
  }
  for (const Message& input : inputs_) {
    if (absl::Status s = TransformOne(input); !s.ok()) return s;
  }
  replay_needed_ = false;
  return absl::OkStatus();
}

absl::Status Processor::Impl::BeginTransaction() {
  absl::Status status = Retry([&] { return producer_->Begin(); });
  if (IsFatal(status)) fatal_ = status;
  outputs_in_txn_ = 0;
  return status;
}

absl::Status Processor::Impl::AbortOpenTransaction(ProcessorAbortCause cause) {
  if (!producer_->in_transaction()) return absl::OkStatus();
  absl::Status status = Retry([&] { return producer_->Abort(); });
  if (status.ok()) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.transactions_aborted;
    ++stats_.aborted_by_cause[static_cast<size_t>(cause)];
  } else if (IsFatal(status)) {
    fatal_ = status;
  }
  outputs_in_txn_ = 0;
  return status;
}

absl::Status Processor::Impl::TransformOne(const Message& input) {
  absl::Status status;
  absl::Status thrown = internal::CallUser(
      "transform", [&] { status = transform_(input, *this); });
  return thrown.ok() ? status : thrown;
}

std::vector<TopicPartitionOffset> Processor::Impl::NextOffsets() const {
  std::vector<TopicPartitionOffset> out;
  for (const Message& m : inputs_) {
    auto it = std::find_if(
        out.begin(), out.end(), [&](const TopicPartitionOffset& o) {
          return o.partition == m.partition() && o.topic == m.topic();
        });
    if (it == out.end()) {
      out.push_back({std::string(m.topic()), m.partition(), m.offset() + 1});
    } else {
      it->offset = std::max(it->offset, m.offset() + 1);
    }
  }
  return out;
}

void Processor::Impl::OnAssigned(
    const std::vector<TopicPartition>& partitions) {
  if (partitions.empty()) return;
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.partitions_assigned;
}

void Processor::Impl::OnRevoked(const std::vector<TopicPartition>& partitions) {
  if (!partitions.empty()) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.partitions_revoked;
  }
  auto revoked = [&](const Message& m) {
    return std::any_of(
        partitions.begin(), partitions.end(),
        [&](const TopicPartition& tp) { return SamePartition(m, tp); });
  };
  if (std::none_of(inputs_.begin(), inputs_.end(), revoked)) return;
  // The new owner reads these partitions from their committed offsets, so
  // nothing read from them here may be committed: abort, drop their
  // records, and transform the rest again later.
  committing_ = false;
  // Close() leaves the group: its revocation is the close's abort.
  absl::Status status = AbortOpenTransaction(
      closed_ ? ProcessorAbortCause::kClose : ProcessorAbortCause::kRevoked);
  if (!status.ok() && !IsFatal(status)) {
    internal::ReportError(options_.on_error, status);
  }
  std::erase_if(inputs_, revoked);
  replay_needed_ = !inputs_.empty();
}

absl::Status Processor::Impl::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  stop_.store(true);
  absl::Status status;
  if (consumer_ != nullptr) {
    status = consumer_->Close();  // leaves the group: OnRevoked aborts
  }
  inputs_.clear();
  if (producer_ != nullptr) {
    if (producer_->in_transaction() && fatal_.ok()) {
      AbortOpenTransaction(ProcessorAbortCause::kClose).IgnoreError();
    }
    absl::Status s = producer_->Close();
    if (status.ok()) status = s;
  }
  return status;
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Processor>> Processor::Create(
    const ProcessorOptions& options, Transform transform) {
  if (!transform) return absl::InvalidArgumentError("no transform");
  if (absl::Status s = Validate(options); !s.ok()) return s;
  auto impl = std::make_unique<Impl>(options, std::move(transform));
  if (absl::Status s = impl->Init(); !s.ok()) return s;
  return std::unique_ptr<Processor>(new Processor(std::move(impl)));
}

Processor::Processor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Processor::~Processor() = default;  // the Impl closes itself

absl::Status Processor::Run() {
  while (!impl_->stopping()) {
    absl::Status s = impl_->RunOnce();
    // A commit that timed out goes on in the background; the next round
    // resumes it.
    if (!s.ok() && NextTxnAction(s) != TxnAction::kRetry) return s;
  }
  return absl::OkStatus();
}

absl::Status Processor::RunOnce() { return impl_->RunOnce(); }

void Processor::Stop() { impl_->Stop(); }

ProcessorStats Processor::stats() const { return impl_->stats(); }

absl::Status Processor::Close() { return impl_->Close(); }

}  // namespace exactly
