// SpooledProducer's public API, its options' validation, and the parts of
// its life that touch every other part: open (recover the store, start the
// threads), flush, close, metrics. The spool's other jobs each have a file;
// spool/impl.h lists them. Design: exactly/spool.h; reasoning: docs/spool.md.
#include <pthread.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/str_cat.h"
#include "exactly/spool.h"
#include "spool/impl.h"

namespace exactly {

namespace spool = internal::spool;
using spool::HasTransactionalId;
using spool::kMaxTopicLength;
using spool::PropertyOr;
using spool::WallMs;

absl::Status Validate(const SpoolOptions& options) {
  if (options.dir.empty()) {
    return absl::InvalidArgumentError(
        "dir is required: the directory the spool lives in");
  }
  if (absl::Status s = Validate(options.producer); !s.ok()) {
    return internal::WithContext(s, "producer");
  }
  if (!HasTransactionalId(options.producer) &&
      options.producer.mode != Mode::kExactlyOnce) {
    return absl::InvalidArgumentError(
        "producer.mode must be kExactlyOnce: the spool's at-least-once mode "
        "still needs the idempotent producer's safe settings");
  }
  if (options.max_records == 0 || options.max_bytes == 0) {
    return absl::InvalidArgumentError(
        "max_records and max_bytes must be positive");
  }
  if (options.full_timeout.count() < 0) {
    return absl::InvalidArgumentError("full_timeout must be >= 0");
  }
  if (options.sync == SyncPolicy::kInterval &&
      options.sync_interval.count() <= 0) {
    return absl::InvalidArgumentError(
        "sync_interval must be positive with SyncPolicy::kInterval");
  }
  if (options.max_batch_records == 0 || options.max_batch_bytes == 0 ||
      options.max_batch_time.count() <= 0) {
    return absl::InvalidArgumentError(
        "max_batch_records, max_batch_bytes and max_batch_time must be "
        "positive");
  }
  const long txn_timeout_ms =
      PropertyOr(options.producer, "transaction.timeout.ms", 60000);
  if (HasTransactionalId(options.producer) &&
      options.max_batch_time.count() >= txn_timeout_ms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_batch_time (", options.max_batch_time.count(),
        " ms) must be shorter than transaction.timeout.ms (", txn_timeout_ms,
        " ms): a batch's transaction stays open while the batch fills"));
  }
  if (options.checkpoint_topic.empty() ||
      options.checkpoint_topic.size() > kMaxTopicLength) {
    return absl::InvalidArgumentError(
        "checkpoint_topic must have 1 to 249 characters");
  }
  for (char c : options.checkpoint_topic) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
          c == '-')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint_topic \"", options.checkpoint_topic,
          "\" may only contain letters, digits, '.', '_' and '-'"));
    }
  }
  if (options.recovery_timeout.count() <= 0) {
    return absl::InvalidArgumentError("recovery_timeout must be positive");
  }
  return absl::OkStatus();
}

absl::Status SpooledProducer::Impl::Open() {
  spool::StoreState state;
  absl::StatusOr<std::unique_ptr<spool::SpoolStore>> store =
      spool::SpoolStore::Open({.dir = options_.dir, .env = options_.env},
                              &state);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  for (const std::string& event : state.events) {
    Report(
        absl::DataLossError(absl::StrCat("spool ", options_.dir, ": ", event)));
  }
  spool_id_ = state.spool_id;
  recovered_cursor_ = state.cursor;
  next_seq_ = state.next_seq;
  next_seq_at_open_ = state.next_seq;
  durable_seq_ = next_seq_ - 1;
  committed_seq_ = state.committed;
  deleted_through_ = state.committed;
  depth_ = state.records;
  bytes_ = state.bytes;
  for (const auto& [seq, ms] : state.ages) ages_.push_back({seq, ms});
  quarantined_seqs_.insert(state.quarantined_seqs.begin(),
                           state.quarantined_seqs.end());
  next_quarantine_ = state.next_quarantine;
  quarantined_ = state.quarantined_records;

  // Named, so that top, perf and gdb say which of the spool's threads is busy.
  drainer_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "spool-drainer");
    DrainerMain();
  });
  write_committer_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "spool-write");
    CommitterMain(Stage::kWrite);
  });
  if (options_.sync == SyncPolicy::kAlways) {
    sync_committer_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "spool-sync");
      CommitterMain(Stage::kSync);
    });
  }
  if (options_.sync == SyncPolicy::kInterval) {
    syncer_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "spool-syncer");
      SyncerMain();
    });
  }
  return absl::OkStatus();
}

absl::Status SpooledProducer::Impl::Flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  // Asynchronous Sends admitted before the call: durable (or failed) first,
  // so that their records get sequences and are waited for too. Groups
  // finish in the order they were queued.
  const auto deadline = Clock::now() + timeout;
  const uint64_t admitted = async_admitted_;
  if (!async_cv_.wait_until(lock, deadline,
                            [&] { return async_completed_ >= admitted; })) {
    return absl::DeadlineExceededError(absl::StrCat(
        "spool not flushed within ", timeout.count(),
        " ms: asynchronous Sends are still waiting to be spooled"));
  }
  timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::max(deadline - Clock::now(), Clock::duration::zero()));
  const uint64_t target = durable_seq_;
  ++flushes_waiting_;
  records_cv_.notify_all();  // the drainer commits without waiting for more
  const bool done = drained_cv_.wait_for(lock, timeout, [&] {
    return committed_seq_ >= target || !drainer_status_.ok() ||
           store_ == nullptr;
  });
  --flushes_waiting_;
  if (committed_seq_ >= target) return absl::OkStatus();
  if (!drainer_status_.ok()) return drainer_status_;
  if (!done) {
    return absl::DeadlineExceededError(absl::StrCat(
        "spool not drained within ", timeout.count(), " ms: committed through ",
        committed_seq_, ", waiting for ", target, " (", depth_,
        " record(s) held)"));
  }
  return absl::FailedPreconditionError("the spool is closed");
}

absl::Status SpooledProducer::Impl::Close(
    std::chrono::milliseconds drain_timeout) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (store_ == nullptr) return absl::OkStatus();
    if (!closed_) {
      closed_ = true;
      space_cv_.notify_all();
    }
    idle_cv_.wait(lock, [&] {
      return queue_.empty() && !writing_ && unsynced_.empty() && !syncing_;
    });
    async_cv_.wait(lock, [&] { return async_completed_ == async_admitted_; });
    committer_stop_ = true;
    write_cv_.notify_all();
    sync_cv_.notify_all();
  }
  if (write_committer_.joinable()) write_committer_.join();
  if (sync_committer_.joinable()) sync_committer_.join();
  absl::Status status = absl::OkStatus();
  if (drain_timeout.count() > 0) status = Flush(drain_timeout);
  stopping_.store(true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    records_cv_.notify_all();
  }
  if (drainer_.joinable()) drainer_.join();
  if (syncer_.joinable()) syncer_.join();
  if (txn_producer_ != nullptr) {
    txn_producer_->Close(std::chrono::milliseconds(1000)).IgnoreError();
    txn_producer_.reset();
  }
  if (producer_ != nullptr) {
    producer_->Close(std::chrono::milliseconds(1000)).IgnoreError();
    producer_.reset();
  }
  reader_.reset();
  if (options_.sync != SyncPolicy::kAlways) store_->SyncWal().IgnoreError();
  uint64_t left = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left = depth_;
    store_.reset();  // closes RocksDB, releasing the directory's lock
    drained_cv_.notify_all();
  }
  if (status.ok() && drain_timeout.count() > 0 && left > 0) {
    status = absl::DeadlineExceededError(absl::StrCat(
        left, " record(s) remain in the spool; the next instance sends them"));
  }
  if (!status.ok() && left > 0 &&
      status.code() == absl::StatusCode::kDeadlineExceeded) {
    status = absl::DeadlineExceededError(absl::StrCat(
        status.message(), "; ", left,
        " record(s) remain in the spool and the next instance sends them"));
  }
  return status;
}

SpoolMetrics SpooledProducer::Impl::Metrics() const {
  SpoolMetrics m;
  std::lock_guard<std::mutex> lock(mu_);
  m.depth = depth_;
  m.bytes = bytes_;
  if (depth_ > 0 && !ages_.empty()) {
    m.oldest_age = std::chrono::milliseconds(
        std::max<int64_t>(0, WallMs() - ages_.front().append_ms));
  }
  if (store_ != nullptr) m.disk_bytes = store_->DiskBytes();
  m.appended = appended_;
  m.sent = sent_.load(std::memory_order_relaxed);
  m.committed = committed_records_;
  m.transactions = transactions_;
  m.group_commits = group_commits_;
  m.group_commit_latency_counts = group_commit_latency_counts_;
  m.group_commit_latency_sum = group_commit_latency_sum_;
  m.group_commit_size_counts = group_commit_size_counts_;
  m.recoveries = recoveries_;
  m.drainer_errors = drainer_errors_;
  m.last_commit_latency = last_commit_latency_;
  m.max_commit_latency = max_commit_latency_;
  if (transactions_ > 0) {
    m.mean_commit_latency = total_commit_latency_ / transactions_;
  }
  m.quarantined = quarantined_;
  m.next_sequence = next_seq_;
  m.committed_sequence = committed_seq_;
  m.drainer_status = drainer_status_;
  return m;
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<SpooledProducer>> SpooledProducer::Create(
    const SpoolOptions& options) {
  if (absl::Status s = Validate(options); !s.ok()) return s;
  auto impl = std::make_unique<Impl>(options);
  if (absl::Status s = impl->Open(); !s.ok()) return s;
  return std::unique_ptr<SpooledProducer>(new SpooledProducer(std::move(impl)));
}

SpooledProducer::SpooledProducer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

SpooledProducer::~SpooledProducer() = default;

absl::Status SpooledProducer::Send(const Record& record) {
  return impl_->Append(std::span<const Record>(&record, 1), {}, false);
}

absl::Status SpooledProducer::Send(const Record& record,
                                   std::string_view cursor) {
  return impl_->Append(std::span<const Record>(&record, 1), cursor, true);
}

absl::Status SpooledProducer::SendBatch(std::span<const Record> records,
                                        std::string_view cursor) {
  return impl_->Append(records, cursor, !cursor.empty());
}

absl::Status SpooledProducer::SendAsync(
    std::span<const Record> records,
    std::function<void(const absl::Status&)> on_durable,
    std::string_view cursor) {
  return impl_->AppendAsync(records, cursor, !cursor.empty(),
                            std::move(on_durable));
}

absl::Status SpooledProducer::Flush(std::chrono::milliseconds timeout) {
  return impl_->Flush(timeout);
}

absl::Status SpooledProducer::Close(std::chrono::milliseconds drain_timeout) {
  return impl_->Close(drain_timeout);
}

const std::string& SpooledProducer::recovered_cursor() const {
  return impl_->recovered_cursor();
}

const std::string& SpooledProducer::spool_id() const {
  return impl_->spool_id();
}

bool SpooledProducer::exactly_once() const { return impl_->exactly_once(); }

SpoolMetrics SpooledProducer::metrics() const { return impl_->Metrics(); }

std::vector<QuarantinedRecord> SpooledProducer::Quarantined() const {
  return impl_->Quarantined();
}

}  // namespace exactly
