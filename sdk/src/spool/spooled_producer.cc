// The spooled producer: group-committed appends to the RocksDB spool, and
// the drainer that moves them into Kafka (see exactly/spool.h for the design,
// docs/spool.md for the reasoning).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/callback_guard.h"
#include "client/retry.h"
#include "exactly/error.h"
#include "exactly/producer.h"
#include "exactly/spool.h"
#include "exactly/transactional_producer.h"
#include "producer/producer_access.h"
#include "spool/block.h"
#include "spool/checkpoint.h"
#include "spool/format.h"
#include "spool/store.h"

namespace exactly {

namespace spool = internal::spool;

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxTopicLength = 249;
constexpr char kSpoolIdHeader[] = "exactly.spool.id";
constexpr char kSpoolSeqHeader[] = "exactly.spool.seq";
// The most a group commit writes at once (record bytes): beyond this the
// rest waits for the next write, which overlaps this group's sync.
constexpr uint64_t kMaxGroupBytes = 4 << 20;
// Encoded bytes of SendAsync calls admitted and not yet completed. Past it,
// SendAsync waits for the committers: without a bound a fast caller queued up
// to max_bytes (1 GiB by default) in memory, every buffer on fresh pages (the
// page faults cost more CPU than the encoding); with it, a few group
// commits' worth stay in flight and their memory is reused.
constexpr uint64_t kMaxAsyncPendingBytes = 16 << 20;
// The spool whose SendAsync completions this thread is running: a completion
// that sends again must not wait for completions (it may be the committer
// they wait for).
thread_local const void* tl_completing = nullptr;
// A drainer call to the transactional API gives up after this long (the
// next call resumes it), so that Close() is not held up by a dead broker
// for a whole transaction timeout.
constexpr std::chrono::milliseconds kDrainerCallTimeout{5000};

// The range of `ranges` (first -> last) that holds `seq`, or ranges.end().
std::map<uint64_t, uint64_t>::const_iterator RangeHolding(
    const std::map<uint64_t, uint64_t>& ranges, uint64_t seq) {
  auto it = ranges.upper_bound(seq);
  if (it == ranges.begin()) return ranges.end();
  --it;
  return seq <= it->second ? it : ranges.end();
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool HasTransactionalId(const ProducerOptions& o) {
  return !o.transactional_id.empty() ||
         o.properties.count("transactional.id") != 0;
}

std::string TransactionalId(const ProducerOptions& o) {
  if (!o.transactional_id.empty()) return o.transactional_id;
  auto it = o.properties.find("transactional.id");
  return it == o.properties.end() ? std::string() : it->second;
}

long PropertyOr(const ProducerOptions& o, const char* name, long fallback) {
  auto it = o.properties.find(name);
  if (it == o.properties.end()) return fallback;
  char* end = nullptr;
  const long v = std::strtol(it->second.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? v : fallback;
}

std::string RandomNonce() {
  std::random_device random;
  return absl::StrCat(random(), "-", random(), "-", WallMs());
}

}  // namespace

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

// ---------------------------------------------------------------------------

class SpooledProducer::Impl {
 public:
  explicit Impl(const SpoolOptions& options)
      : options_(options),
        exactly_once_(HasTransactionalId(options.producer)),
        transactional_id_(TransactionalId(options.producer)),
        stamp_headers_(options.stamp_headers || !exactly_once_),
        max_message_bytes_(
            PropertyOr(options.producer, "message.max.bytes", 1000000)) {}
  ~Impl() { Close(std::chrono::milliseconds(0)).IgnoreError(); }

  absl::Status Open();
  absl::Status Append(std::span<const Record> records, std::string_view cursor,
                      bool has_cursor);
  absl::Status AppendAsync(std::span<const Record> records,
                           std::string_view cursor, bool has_cursor,
                           std::function<void(const absl::Status&)> on_durable);
  absl::Status Flush(std::chrono::milliseconds timeout);
  absl::Status Close(std::chrono::milliseconds drain_timeout);
  SpoolMetrics Metrics() const;
  std::vector<QuarantinedRecord> Quarantined() const;

  const std::string& recovered_cursor() const { return recovered_cursor_; }
  const std::string& spool_id() const { return spool_id_; }
  bool exactly_once() const { return exactly_once_; }

 private:
  // One Send/SendBatch waiting for its group commit. Each has its own
  // condition variable, so that finishing a stage wakes exactly the threads
  // it concerns (on 2 cores a thundering herd costs more than the write).
  struct Waiter {
    spool::BlockBuilder block;  // its records, encoded
    std::string cursor;
    bool has_cursor = false;
    uint64_t bytes = 0;
    uint64_t first_seq = 0;
    bool written = false;  // in the WAL, waiting for a sync (kAlways)
    bool done = false;
    absl::Status status;
    std::condition_variable wake;  // done, or its turn to write or sync
    // Set for SendAsync: run (without the lock) once done, instead of a
    // thread waiting on `wake`; the Waiter is then freed.
    std::function<void(const absl::Status&)> on_durable;
  };
  // A group commit written to the WAL and waiting for its sync.
  struct WrittenGroup {
    std::vector<Waiter*> sends;
    int64_t written_ms = 0;
  };
  // Append time of the records from first_seq on, for the oldest-age metric.
  struct AgeSample {
    uint64_t first_seq;
    int64_t append_ms;
  };
  // What one drain batch (transaction) covered.
  struct Batch {
    uint64_t last = 0;     // last sequence covered (sent, quarantined, gap)
    uint64_t records = 0;  // records sent
    uint64_t bytes = 0;    // their stored bytes
  };

  // Validates and encodes `records` into w's block.
  absl::Status Encode(std::span<const Record> records, std::string_view cursor,
                      bool has_cursor, Waiter& w);
  // Reserves room for w (waiting or failing as configured) and queues it.
  absl::Status Admit(std::unique_lock<std::mutex>& lock, Waiter& w);
  enum class Stage { kWrite, kSync };
  void WakeForStage(Stage stage, Waiter* first);
  void RunCompletions(std::unique_lock<std::mutex>& lock);
  void CommitterMain(Stage stage);
  // The group commit, in two stages that overlap (see Append): one thread
  // writes the queued Sends to the WAL while another syncs the groups
  // written before.
  void WriteGroup(std::unique_lock<std::mutex>& lock);
  void SyncGroups(std::unique_lock<std::mutex>& lock);
  // With mu_ held: `group` is durable (or failed with `status`); wakes its
  // Sends.
  void FinishGroup(const std::vector<Waiter*>& group,
                   const absl::Status& status, int64_t written_ms);
  // A failed group write or sync: resumes RocksDB, and says what the Sends
  // get.
  absl::Status NotSpooled(const absl::Status& status);
  void Report(const absl::Status& status) {
    internal::ReportError(options_.on_error, status);
  }

  // Drainer.
  void DrainerMain();
  void SyncerMain();
  absl::Status Recover();
  absl::Status RecoverExactlyOnce();
  absl::Status DrainExactlyOnce();
  absl::Status DrainAtLeastOnce();
  // Walks the records after batch.last (up to what is durable), checking
  // each; calls send(seq, record) for the good ones until it returns an
  // error or `full` says the batch is full. Damaged and missing records are
  // quarantined and covered by the batch.
  absl::Status CollectRecords(
      Batch& batch,
      const std::function<absl::Status(uint64_t, const spool::DecodedRecord&,
                                       uint64_t)>& send,
      const std::function<bool(const Batch&)>& full);
  // Handles one record of a collection (checks, quarantines, sends).
  absl::Status Visit(
      Batch& batch, uint64_t seq, std::string_view stored,
      const std::function<absl::Status(uint64_t, const spool::DecodedRecord&,
                                       uint64_t)>& send);
  void QuarantineRecord(uint64_t seq, std::string_view stored,
                        const std::string& reason);
  void QuarantineMissing(uint64_t first, uint64_t last, const std::string& why);
  // Marks everything through batch.last committed: metrics (when `ours`:
  // this instance's transaction), waiters, and the local delete.
  void Committed(const Batch& batch, uint64_t previous, bool ours);
  void ApplyWatermark(uint64_t watermark);
  bool WaitForRecords(Clock::time_point deadline);
  Record WithHeaders(const spool::DecodedRecord& d, uint64_t seq,
                     std::vector<Header>& headers, std::string& seq_text);
  // Makes the producer learn `topic`'s metadata now (see WarmUpTopic).
  void WarmUp(std::string_view topic);

  const SpoolOptions options_;
  const bool exactly_once_;
  const std::string transactional_id_;
  const bool stamp_headers_;
  const long max_message_bytes_;
  std::string spool_id_;
  std::string recovered_cursor_;
  uint64_t next_seq_at_open_ = 1;

  std::unique_ptr<spool::SpoolStore> store_;

  mutable std::mutex mu_;
  std::condition_variable idle_cv_;     // no Send being written or synced
  std::condition_variable space_cv_;    // room in the spool
  std::condition_variable records_cv_;  // new durable records, or stop
  std::condition_variable drained_cv_;  // watermark moved
  std::deque<Waiter*> queue_;           // Sends not yet written
  bool writing_ = false;                // a thread is writing a group
  std::vector<WrittenGroup> unsynced_;  // waiting for a sync (kAlways)
  bool syncing_ = false;                // a thread is syncing the WAL
  // Groups that were written but whose sync failed (first -> last sequence):
  // their Sends failed, so the drainer skips them (and RocksDB is asked to
  // delete them).
  std::map<uint64_t, uint64_t> withdrawn_;
  bool closed_ = false;
  uint64_t next_seq_ = 1;       // next sequence to hand out
  uint64_t durable_seq_ = 0;    // every sequence <= this is written
  uint64_t committed_seq_ = 0;  // the watermark: <= this is in Kafka
  uint64_t depth_ = 0;          // records held (and reserved by Sends)
  uint64_t bytes_ = 0;
  std::deque<AgeSample> ages_;
  std::set<uint64_t> quarantined_seqs_;  // > committed_seq_
  uint64_t next_quarantine_ = 1;
  uint64_t unsynced_groups_ = 0;
  int flushes_waiting_ = 0;  // Flush() calls waiting: the drainer hurries
  // Sends waiting for room, or refused for want of it since the last commit:
  // the drainer hurries too, as room comes back only when it commits.
  int room_waiters_ = 0;
  bool room_refused_ = false;
  // Asynchronous Sends: admitted, done (durable or failed), and whose
  // completion has run; the completions waiting to run.
  uint64_t async_admitted_ = 0;
  uint64_t async_finished_ = 0;
  uint64_t async_completed_ = 0;
  uint64_t async_pending_bytes_ = 0;  // see kMaxAsyncPendingBytes
  std::vector<Waiter*> completions_;
  // Async work for the committers: one thread per stage, so that writing
  // group k+1 still overlaps syncing group k when no Send waits to do it.
  std::condition_variable write_cv_;
  std::condition_variable sync_cv_;
  std::condition_variable async_cv_;  // completions ran
  bool committer_stop_ = false;
  absl::Status drainer_status_;
  // Metrics.
  uint64_t appended_ = 0;
  // Counted per record by the drainer: atomic, so that it does not take mu_
  // (which every Send contends for) once per record.
  std::atomic<uint64_t> sent_{0};
  uint64_t committed_records_ = 0;
  uint64_t transactions_ = 0;
  uint64_t group_commits_ = 0;
  uint64_t recoveries_ = 0;
  uint64_t drainer_errors_ = 0;
  uint64_t quarantined_ = 0;
  std::chrono::microseconds last_commit_latency_{0};
  std::chrono::microseconds max_commit_latency_{0};
  std::chrono::microseconds total_commit_latency_{0};

  // Drainer thread only.
  std::atomic<bool> stopping_{false};
  bool need_recovery_ = true;
  bool topic_created_ = false;
  int32_t checkpoint_partition_ = 0;
  uint64_t deleted_through_ = 0;  // local deletes done through here
  uint64_t commits_since_file_drop_ = 0;
  std::unique_ptr<TransactionalProducer> txn_producer_;
  std::unique_ptr<Producer> producer_;
  std::unique_ptr<spool::CheckpointReader> reader_;
  std::set<std::string, std::less<>> warm_topics_;  // of the current producer
  std::string_view last_warm_topic_;                // into warm_topics_
  std::map<uint64_t, uint64_t> withdrawn_seen_;     // withdrawn_, as last read

  std::thread drainer_;
  std::thread syncer_;
  std::thread write_committer_;
  std::thread sync_committer_;
};

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

  drainer_ = std::thread([this] { DrainerMain(); });
  write_committer_ = std::thread([this] { CommitterMain(Stage::kWrite); });
  if (options_.sync == SyncPolicy::kAlways) {
    sync_committer_ = std::thread([this] { CommitterMain(Stage::kSync); });
  }
  if (options_.sync == SyncPolicy::kInterval) {
    syncer_ = std::thread([this] { SyncerMain(); });
  }
  return absl::OkStatus();
}

// --- Appending --------------------------------------------------------------

absl::Status SpooledProducer::Impl::Encode(std::span<const Record> records,
                                           std::string_view cursor,
                                           bool has_cursor, Waiter& w) {
  const int64_t now_ms = WallMs();
  size_t estimate = 0;  // the block adds a 4-byte length per record
  for (const Record& r : records) {
    estimate += 4 + spool::EncodedSizeBound(r, cursor);
  }
  w.block.Reserve(estimate);
  for (const Record& r : records) {
    if (r.topic.empty() || r.topic.size() > kMaxTopicLength) {
      return absl::InvalidArgumentError(
          absl::StrCat("topic name must have 1 to ", kMaxTopicLength,
                       " characters, got ", r.topic.size()));
    }
    if (r.partition < kAnyPartition) {
      return absl::InvalidArgumentError(
          absl::StrCat("partition ", r.partition, " is invalid"));
    }
    if (static_cast<long>(r.key.size() + r.value.size()) > max_message_bytes_) {
      return absl::InvalidArgumentError(
          absl::StrCat("record of ", r.key.size() + r.value.size(),
                       " bytes exceeds message.max.bytes (", max_message_bytes_,
                       "): Kafka would refuse it"));
    }
    Record copy = r;
    if (copy.timestamp_ms == 0) copy.timestamp_ms = now_ms;
    w.block.Add(copy, now_ms, cursor);
  }
  w.cursor = std::string(cursor);
  w.has_cursor = has_cursor;
  w.bytes = w.block.record_bytes();
  const uint64_t n = w.block.records();
  if (n > options_.max_records || w.bytes > options_.max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        n, " record(s) of ", w.bytes,
        " bytes can never fit in the spool (max_records ", options_.max_records,
        ", max_bytes ", options_.max_bytes, ")"));
  }
  return absl::OkStatus();
}

absl::Status SpooledProducer::Impl::Admit(std::unique_lock<std::mutex>& lock,
                                          Waiter& w) {
  if (closed_) return absl::FailedPreconditionError("the spool is closed");
  // Room: reserve it before writing, so that concurrent Sends cannot
  // overfill the spool together.
  const uint64_t n = w.block.records();
  auto fits = [&] {
    return depth_ + n <= options_.max_records &&
           bytes_ + w.bytes <= options_.max_bytes;
  };
  if (!fits()) {
    if (options_.when_full == SpoolFullPolicy::kFail ||
        options_.full_timeout.count() == 0) {
      room_refused_ = true;
      records_cv_.notify_all();  // the drainer commits what it has
      return absl::ResourceExhaustedError(absl::StrCat(
          "spool full: it holds ", depth_, " records / ", bytes_,
          " bytes (max_records ", options_.max_records, ", max_bytes ",
          options_.max_bytes, "); the record was not spooled"));
    }
    const auto deadline = Clock::now() + options_.full_timeout;
    ++room_waiters_;
    records_cv_.notify_all();  // the drainer commits what it has
    const bool room =
        space_cv_.wait_until(lock, deadline, [&] { return fits() || closed_; });
    --room_waiters_;
    if (!room) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "spool full for ", options_.full_timeout.count(), " ms: it holds ",
          depth_, " records / ", bytes_, " bytes (max_records ",
          options_.max_records, ", max_bytes ", options_.max_bytes,
          "); the record was not spooled"));
    }
    if (closed_) return absl::FailedPreconditionError("the spool is closed");
  }
  depth_ += n;
  bytes_ += w.bytes;
  queue_.push_back(&w);
  return absl::OkStatus();
}

absl::Status SpooledProducer::Impl::Append(std::span<const Record> records,
                                           std::string_view cursor,
                                           bool has_cursor) {
  if (records.empty()) return absl::OkStatus();
  Waiter w;
  if (absl::Status s = Encode(records, cursor, has_cursor, w); !s.ok()) {
    return s;
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (absl::Status s = Admit(lock, w); !s.ok()) return s;
  // Whoever finds a stage free does it for everyone queued there; the others
  // sleep until their group is done or the stage passes to them.
  for (;;) {
    if (w.done) {
      RunCompletions(lock);
      return w.status;
    }
    if (!w.written && !writing_) {
      WriteGroup(lock);
    } else if (w.written && !syncing_) {
      SyncGroups(lock);
    } else {
      w.wake.wait(lock);
    }
  }
}

absl::Status SpooledProducer::Impl::AppendAsync(
    std::span<const Record> records, std::string_view cursor, bool has_cursor,
    std::function<void(const absl::Status&)> on_durable) {
  if (records.empty()) {
    if (on_durable) on_durable(absl::OkStatus());
    return absl::OkStatus();
  }
  auto w = std::make_unique<Waiter>();
  if (absl::Status s = Encode(records, cursor, has_cursor, *w); !s.ok()) {
    return s;
  }
  w->on_durable =
      on_durable ? std::move(on_durable) : [](const absl::Status&) {};
  std::unique_lock<std::mutex> lock(mu_);
  if (tl_completing != this) {
    async_cv_.wait(lock, [&] {
      return async_pending_bytes_ == 0 ||
             async_pending_bytes_ + w->bytes <= kMaxAsyncPendingBytes ||
             closed_;
    });
  }
  if (absl::Status s = Admit(lock, *w); !s.ok()) return s;
  async_pending_bytes_ += w->bytes;
  w.release();  // owned by the queue until its completion has run
  ++async_admitted_;
  write_cv_.notify_one();
  return absl::OkStatus();
}

// Wakes whoever should take a stage next: the Send that waits for it, or
// that stage's committer thread if the first in line is an asynchronous Send.
void SpooledProducer::Impl::WakeForStage(Stage stage, Waiter* first) {
  if (first->on_durable) {
    (stage == Stage::kWrite ? write_cv_ : sync_cv_).notify_one();
  } else {
    first->wake.notify_one();
  }
}

// Runs the completions of asynchronous Sends that finished, without the lock
// (a completion may send again), and frees them.
void SpooledProducer::Impl::RunCompletions(std::unique_lock<std::mutex>& lock) {
  if (completions_.empty()) return;
  std::vector<Waiter*> done;
  done.swap(completions_);
  lock.unlock();
  uint64_t freed = 0;
  const void* outer = tl_completing;
  tl_completing = this;
  for (Waiter* w : done) {
    if (absl::Status thrown = internal::CallUser(
            "SendAsync completion", [&] { w->on_durable(w->status); });
        !thrown.ok()) {
      Report(thrown);
    }
    freed += w->bytes;
    delete w;
  }
  tl_completing = outer;
  lock.lock();
  async_completed_ += done.size();
  async_pending_bytes_ -= freed;
  async_cv_.notify_all();
}

// Drives one stage of the group commit for asynchronous Sends, whose callers
// do not wait to do it themselves; synchronous Sends still take the stages
// they find free, so these threads only fill in. One thread per stage: a
// single thread would keep writing while a fast caller keeps queueing, and
// never get to the sync.
void SpooledProducer::Impl::CommitterMain(Stage stage) {
  std::condition_variable& cv = stage == Stage::kWrite ? write_cv_ : sync_cv_;
  auto work = [&] {
    if (async_admitted_ == async_finished_) return false;
    return stage == Stage::kWrite ? !queue_.empty() && !writing_
                                  : !unsynced_.empty() && !syncing_;
  };
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv.wait(lock, [&] { return work() || committer_stop_; });
    if (!work()) break;  // stopping, and nothing asynchronous is left
    if (stage == Stage::kWrite) {
      WriteGroup(lock);
    } else {
      SyncGroups(lock);
    }
    RunCompletions(lock);
  }
  RunCompletions(lock);
}

// Called with the lock held and no writer: writes every queued Send in one
// RocksDB write batch. With SyncPolicy::kAlways the group then waits for a
// sync, which the next group's write does not: writing group k+1 overlaps
// syncing group k.
void SpooledProducer::Impl::WriteGroup(std::unique_lock<std::mutex>& lock) {
  writing_ = true;
  // Everything queued, up to kMaxGroupBytes (at least one Send): a huge
  // write would hold up the sync behind it, and copying it costs more than
  // the write it saves.
  std::vector<Waiter*> group;
  uint64_t group_bytes = 0;
  while (!queue_.empty() &&
         (group.empty() ||
          group_bytes + queue_.front()->bytes <= kMaxGroupBytes)) {
    group_bytes += queue_.front()->bytes;
    group.push_back(queue_.front());
    queue_.pop_front();
  }
  const uint64_t first_seq = next_seq_;
  for (Waiter* w : group) {
    w->first_seq = next_seq_;
    next_seq_ += w->block.records();
  }
  const uint64_t next = next_seq_;
  lock.unlock();

  // Sealed without the lock (it touches every record): the group is this
  // thread's until it is finished. One block per Send call: RocksDB's cost is
  // per key.
  std::vector<std::pair<uint64_t, std::string_view>> blocks;
  blocks.reserve(group.size());
  std::optional<std::pair<uint64_t, std::string>> cursor;
  for (Waiter* w : group) {
    const uint64_t last = w->first_seq + w->block.records() - 1;
    blocks.emplace_back(last, w->block.Seal(w->first_seq));
    if (w->has_cursor) cursor.emplace(last, w->cursor);
  }

  absl::Status status = store_->Append(blocks, next, cursor, /*sync=*/false);
  if (!status.ok()) status = NotSpooled(status);
  const int64_t now_ms = WallMs();

  lock.lock();
  writing_ = false;
  if (!queue_.empty()) WakeForStage(Stage::kWrite, queue_.front());
  if (!status.ok()) {
    // Nothing of the group is in the WAL: its sequences were never used.
    next_seq_ = first_seq;
    FinishGroup(group, status, now_ms);
  } else if (options_.sync == SyncPolicy::kAlways) {
    // This thread's Send is in the group: it syncs next if nobody is.
    for (Waiter* w : group) w->written = true;
    unsynced_.push_back({std::move(group), now_ms});
    // Asynchronous Sends do not sync for themselves: the committer does.
    if (!syncing_ && async_admitted_ > async_finished_) {
      sync_cv_.notify_one();
    }
  } else {
    FinishGroup(group, status, now_ms);
    ++unsynced_groups_;  // for the interval syncer
  }
  if (queue_.empty() && unsynced_.empty() && !syncing_) idle_cv_.notify_all();
}

// Called with the lock held, no syncer and written groups waiting: makes
// every group written so far durable with one WAL sync.
void SpooledProducer::Impl::SyncGroups(std::unique_lock<std::mutex>& lock) {
  syncing_ = true;
  std::vector<WrittenGroup> groups = std::move(unsynced_);
  unsynced_.clear();
  lock.unlock();

  absl::Status status = store_->SyncWal();
  if (!status.ok()) {
    status = NotSpooled(status);
    // Written but not durable: make sure they are never sent (their Sends
    // fail). The delete is best effort; the drainer skips them regardless.
    const Waiter* last_send = groups.back().sends.back();
    const uint64_t first = groups.front().sends.front()->first_seq;
    const uint64_t last = last_send->first_seq + last_send->block.records() - 1;
    store_->DeleteRecords(first, last).IgnoreError();
    lock.lock();
    withdrawn_.emplace(first, last);
  } else {
    lock.lock();
  }
  syncing_ = false;
  if (!unsynced_.empty()) {
    WakeForStage(Stage::kSync, unsynced_.front().sends.front());
  }
  for (const WrittenGroup& g : groups)
    FinishGroup(g.sends, status, g.written_ms);
  if (queue_.empty() && unsynced_.empty() && !writing_) idle_cv_.notify_all();
}

absl::Status SpooledProducer::Impl::NotSpooled(const absl::Status& status) {
  // RocksDB stops writing after an I/O error until resumed; the next group
  // (the disk may have room again) tries that first.
  store_->Resume().IgnoreError();
  return internal::WithContext(
      status,
      "the record(s) were not spooled (records accepted before are safe)");
}

void SpooledProducer::Impl::FinishGroup(const std::vector<Waiter*>& group,
                                        const absl::Status& status,
                                        int64_t written_ms) {
  const uint64_t first_seq = group.front()->first_seq;
  uint64_t records = 0;
  for (Waiter* w : group) records += w->block.records();
  if (status.ok()) {
    durable_seq_ = first_seq + records - 1;
    appended_ += records;
    ++group_commits_;
    if (ages_.empty() || written_ms - ages_.back().append_ms >= 10) {
      ages_.push_back({first_seq, written_ms});
    }
    records_cv_.notify_all();
  } else {
    for (Waiter* w : group) {
      depth_ -= w->block.records();
      bytes_ -= w->bytes;
    }
    space_cv_.notify_all();
  }
  for (Waiter* w : group) {
    w->status = status;
    w->done = true;
    if (w->on_durable) {
      completions_.push_back(w);
      ++async_finished_;
    } else {
      w->wake.notify_one();
    }
  }
}

void SpooledProducer::Impl::SyncerMain() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_.load()) {
    records_cv_.wait_for(lock, options_.sync_interval);
    if (unsynced_groups_ == 0) continue;
    unsynced_groups_ = 0;
    lock.unlock();
    absl::Status s = store_->SyncWal();
    if (!s.ok()) Report(s);
    lock.lock();
  }
}

// --- Flush, close, metrics ------------------------------------------------

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

std::vector<QuarantinedRecord> SpooledProducer::Impl::Quarantined() const {
  std::vector<QuarantinedRecord> out;
  std::lock_guard<std::mutex> lock(mu_);
  if (store_ == nullptr) return out;
  for (auto& [id, e] : store_->ListQuarantine()) {
    out.push_back({.sequence = e.seq,
                   .records = e.records,
                   .reason = std::move(e.reason),
                   .bytes = std::move(e.bytes),
                   .quarantined_ms = e.quarantined_ms});
  }
  return out;
}

// --- Drainer ----------------------------------------------------------------

bool SpooledProducer::Impl::WaitForRecords(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return records_cv_.wait_until(lock, deadline, [&] {
    return durable_seq_ > committed_seq_ || stopping_.load();
  }) && !stopping_.load();
}

void SpooledProducer::Impl::DrainerMain() {
  RetryPolicy policy = options_.producer.retry;
  policy.initial_backoff =
      std::max(policy.initial_backoff, std::chrono::milliseconds(50));
  policy.max_backoff = std::max(policy.max_backoff, policy.initial_backoff);
  std::chrono::milliseconds pause = policy.initial_backoff;
  while (!stopping_.load()) {
    absl::Status status;
    if (need_recovery_) {
      status = Recover();
      if (status.ok()) need_recovery_ = false;
    } else if (!WaitForRecords(Clock::now() + std::chrono::seconds(1))) {
      continue;
    } else {
      status = exactly_once_ ? DrainExactlyOnce() : DrainAtLeastOnce();
    }
    if (status.ok()) {
      pause = policy.initial_backoff;
      continue;
    }
    if (stopping_.load() && status.code() == absl::StatusCode::kCancelled) {
      break;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++drainer_errors_;
    }
    // Rebuild() refuses (FAILED_PRECONDITION) once the id was fenced.
    if (IsFenced(status) ||
        (status.code() == absl::StatusCode::kFailedPrecondition &&
         absl::StrContains(status.message(), "fenced"))) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        drainer_status_ = internal::WithContext(
            status,
            absl::StrCat("spool drainer stopped: transactional.id \"",
                         transactional_id_,
                         "\" now belongs to another instance; the records "
                         "stay in the spool"));
        drained_cv_.notify_all();
      }
      Report(drainer_status_);
      return;
    }
    Report(internal::WithContext(
        status,
        absl::StrCat("spool drainer (will retry in ", pause.count(), " ms)")));
    need_recovery_ = true;
    {
      std::unique_lock<std::mutex> lock(mu_);
      records_cv_.wait_for(lock, pause, [&] { return stopping_.load(); });
    }
    pause = std::min(pause * 2, policy.max_backoff);
  }
}

absl::Status SpooledProducer::Impl::Recover() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++recoveries_;
  }
  if (!exactly_once_) {
    if (producer_ == nullptr) {
      ProducerOptions o = options_.producer;
      if (!o.on_error) o.on_error = options_.on_error;
      absl::StatusOr<std::unique_ptr<Producer>> p = Producer::Create(o);
      if (!p.ok()) return p.status();
      producer_ = std::move(*p);
      warm_topics_.clear();
      last_warm_topic_ = {};
    }
    return absl::OkStatus();
  }
  return RecoverExactlyOnce();
}

absl::Status SpooledProducer::Impl::RecoverExactlyOnce() {
  // (1) Fence the previous instance: init_transactions completes or aborts
  // its last transaction before it returns.
  if (txn_producer_ == nullptr) {
    ProducerOptions o = options_.producer;
    if (o.transaction_call_timeout == kRemainingTransactionTime) {
      o.transaction_call_timeout = kDrainerCallTimeout;
    }
    // The drainer retries whole rounds itself (with a recovery in between):
    // keep single calls short so that Close() is never held up for long.
    o.retry.max_retries = std::min(o.retry.max_retries, 3);
    if (!o.on_error) o.on_error = options_.on_error;
    absl::StatusOr<std::unique_ptr<TransactionalProducer>> p =
        TransactionalProducer::Create(o);
    if (!p.ok()) return p.status();
    txn_producer_ = std::move(*p);
  } else if (absl::Status s = txn_producer_->Rebuild(); !s.ok()) {
    return s;
  }
  warm_topics_.clear();
  last_warm_topic_ = {};
  if (reader_ == nullptr) {
    absl::StatusOr<std::unique_ptr<spool::CheckpointReader>> r =
        spool::CheckpointReader::Create(options_.producer,
                                        options_.checkpoint_topic);
    if (!r.ok()) return r.status();
    reader_ = std::move(*r);
  }
  const auto timeout = options_.recovery_timeout;
  if (options_.create_checkpoint_topic && !topic_created_) {
    if (absl::Status s = reader_->CreateTopic(timeout); !s.ok()) return s;
    topic_created_ = true;
  }
  absl::StatusOr<int32_t> partitions = reader_->PartitionCount(timeout);
  if (!partitions.ok()) return partitions.status();
  checkpoint_partition_ =
      spool::CheckpointPartition(transactional_id_, *partitions);
  WarmUp(options_.checkpoint_topic);

  // (2) A probe, committed after every transaction of the old instance.
  const std::string nonce = RandomNonce();
  const std::string probe_key = spool::ProbeKey(transactional_id_);
  absl::Status probed = txn_producer_->Transact([&](Transaction& txn) {
    return txn.Send({.topic = options_.checkpoint_topic,
                     .key = probe_key,
                     .value = nonce,
                     .partition = checkpoint_partition_});
  });
  if (!probed.ok()) return probed;

  // (3) The last checkpoint before the probe is the committed watermark.
  absl::StatusOr<std::optional<std::string>> value = reader_->ReadUntilProbe(
      checkpoint_partition_, spool::CheckpointKey(transactional_id_), probe_key,
      nonce, Clock::now() + timeout, &stopping_);
  if (!value.ok()) return value.status();
  uint64_t watermark = 0;
  if (value->has_value()) {
    auto parsed = spool::ParseCheckpoint(**value);
    if (!parsed.has_value()) {
      Report(absl::DataLossError(
          absl::StrCat("spool ", options_.dir, ": the checkpoint in ",
                       options_.checkpoint_topic, " is unreadable (\"", **value,
                       "\"); relying on the local watermark")));
    } else if (parsed->first != spool_id_) {
      Report(absl::FailedPreconditionError(absl::StrCat(
          "spool ", options_.dir, ": the checkpoint of transactional.id \"",
          transactional_id_, "\" belongs to spool ", parsed->first,
          ", not to this one (", spool_id_,
          "): was the directory replaced? It does not apply here")));
    } else if (parsed->second >= next_seq_at_open_) {
      // Kafka has seen sequences this copy of the spool never handed out:
      // the directory is an older copy. Only the records it holds can be
      // covered; new ones get sequences after Kafka's.
      Report(absl::FailedPreconditionError(absl::StrCat(
          "spool ", options_.dir, ": Kafka's checkpoint (sequence ",
          parsed->second, ") is ahead of this spool (next sequence ",
          next_seq_at_open_,
          " when opened): is this an older copy of the "
          "directory?")));
      watermark = next_seq_at_open_ - 1;
      std::lock_guard<std::mutex> lock(mu_);
      // New records must not be taken for committed ones.
      if (next_seq_ <= parsed->second) next_seq_ = parsed->second + 1;
    } else {
      watermark = parsed->second;
    }
  }
  ApplyWatermark(watermark);
  return absl::OkStatus();
}

// Everything <= watermark is in Kafka: delete it locally.
void SpooledProducer::Impl::ApplyWatermark(uint64_t watermark) {
  uint64_t previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    previous = committed_seq_;
  }
  if (watermark <= previous) return;
  Batch batch;
  batch.last = watermark;
  // Quarantined records stay in their blocks but are no longer counted.
  absl::Status s = store_->Scan(previous + 1, watermark,
                                [&](uint64_t seq, std::string_view stored) {
                                  if (quarantined_seqs_.count(seq) > 0) {
                                    return true;
                                  }
                                  ++batch.records;
                                  batch.bytes += stored.size();
                                  return true;
                                });
  if (!s.ok()) Report(s);
  Committed(batch, previous, /*ours=*/false);
}

void SpooledProducer::Impl::Committed(const Batch& batch, uint64_t previous,
                                      bool ours) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    committed_seq_ = batch.last;
    room_refused_ = false;
    depth_ -= std::min(depth_, batch.records);
    bytes_ -= std::min(bytes_, batch.bytes);
    if (ours) {
      committed_records_ += batch.records;
      ++transactions_;
    }
    while (ages_.size() > 1 && ages_[1].first_seq <= batch.last + 1) {
      ages_.pop_front();
    }
    if (!ages_.empty() && ages_.front().first_seq <= batch.last &&
        durable_seq_ <= batch.last) {
      ages_.pop_front();
    }
    quarantined_seqs_.erase(quarantined_seqs_.begin(),
                            quarantined_seqs_.upper_bound(batch.last));
    while (!withdrawn_.empty() && withdrawn_.begin()->second <= batch.last) {
      withdrawn_.erase(withdrawn_.begin());
    }
    space_cv_.notify_all();
    drained_cv_.notify_all();
  }
  // Deleting is only housekeeping: the checkpoint says what is committed.
  const uint64_t from = std::max(previous, deleted_through_) + 1;
  if (from <= batch.last) {
    absl::Status s = store_->DeleteCommitted(from, batch.last);
    if (s.ok()) {
      deleted_through_ = batch.last;
    } else {
      store_->Resume().IgnoreError();
    }
  }
  if (++commits_since_file_drop_ >= 64) {
    commits_since_file_drop_ = 0;
    store_->DropCommittedFiles(deleted_through_);
  }
}

void SpooledProducer::Impl::QuarantineRecord(uint64_t seq,
                                             std::string_view stored,
                                             const std::string& reason) {
  spool::QuarantineEntry entry{.reason = reason,
                               .seq = seq,
                               .records = 1,
                               .quarantined_ms = WallMs(),
                               .bytes = std::string(stored)};
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_quarantine_++;
  }
  absl::Status s = store_->Quarantine(id, entry);
  {
    std::lock_guard<std::mutex> lock(mu_);
    quarantined_seqs_.insert(seq);
    ++quarantined_;
    depth_ -= std::min<uint64_t>(depth_, 1);
    bytes_ -= std::min<uint64_t>(bytes_, stored.size());
  }
  Report(absl::DataLossError(absl::StrCat(
      "spool ", options_.dir, ": record ", seq, " ", reason,
      s.ok() ? "; moved to the quarantine"
             : absl::StrCat("; could not be moved to the quarantine (",
                            s.message(), ")"),
      ", the drainer goes on")));
}

void SpooledProducer::Impl::QuarantineMissing(uint64_t first, uint64_t last,
                                              const std::string& why) {
  // Sequences quarantined before are not missing, nor are those of Sends
  // that failed after their write (withdrawn).
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t s = first;
    while (s <= last) {
      if (auto w = RangeHolding(withdrawn_, s); w != withdrawn_.end()) {
        s = w->second + 1;
        continue;
      }
      if (quarantined_seqs_.count(s) > 0) {
        ++s;
        continue;
      }
      // A run of missing records from s: up to the next sequence that is
      // quarantined or withdrawn.
      uint64_t stop = last + 1;
      if (auto q = quarantined_seqs_.lower_bound(s);
          q != quarantined_seqs_.end()) {
        stop = std::min(stop, *q);
      }
      if (auto w = withdrawn_.lower_bound(s); w != withdrawn_.end()) {
        stop = std::min(stop, w->first);
      }
      runs.emplace_back(s, stop - 1);
      s = stop;
    }
  }
  for (const auto& [a, b] : runs) {
    spool::QuarantineEntry entry{.reason = why,
                                 .seq = a,
                                 .records = b - a + 1,
                                 .quarantined_ms = WallMs()};
    uint64_t id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      id = next_quarantine_++;
    }
    absl::Status s = store_->Quarantine(id, entry);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (uint64_t q = a; q <= b && quarantined_seqs_.size() < 1'000'000;
           ++q) {
        quarantined_seqs_.insert(q);
      }
      quarantined_ += b - a + 1;
    }
    Report(absl::DataLossError(absl::StrCat(
        "spool ", options_.dir, ": ",
        a == b ? absl::StrCat("record ", a)
               : absl::StrCat(b - a + 1, " records ", a, "..", b),
        " missing (", why, ")", s.ok() ? "; noted in the quarantine" : "",
        ", the drainer goes on")));
  }
}

absl::Status SpooledProducer::Impl::Visit(
    Batch& batch, uint64_t seq, std::string_view stored,
    const std::function<absl::Status(uint64_t, const spool::DecodedRecord&,
                                     uint64_t)>& send) {
  if (seq > batch.last + 1) {
    QuarantineMissing(batch.last + 1, seq - 1,
                      "their spool data was lost or unreadable");
  }
  batch.last = seq;
  if (RangeHolding(withdrawn_seen_, seq) != withdrawn_seen_.end()) {
    return absl::OkStatus();  // its Send failed
  }
  // Quarantined before (this run or an earlier one): its bytes stay in its
  // block until the watermark passes it. Only this thread changes the set.
  if (!quarantined_seqs_.empty() && quarantined_seqs_.count(seq) > 0) {
    return absl::OkStatus();
  }
  if (!spool::CheckRecord(stored, seq)) {
    QuarantineRecord(seq, stored, "failed its CRC-32C check");
    return absl::OkStatus();
  }
  absl::StatusOr<spool::DecodedRecord> decoded = spool::DecodeRecord(stored);
  if (!decoded.ok()) {
    QuarantineRecord(
        seq, stored,
        absl::StrCat("does not decode: ", decoded.status().message()));
    return absl::OkStatus();
  }
  absl::Status s = send(seq, *decoded, stored.size());
  if (!s.ok()) return s;
  ++batch.records;
  batch.bytes += stored.size();
  return absl::OkStatus();
}

absl::Status SpooledProducer::Impl::CollectRecords(
    Batch& batch,
    const std::function<absl::Status(uint64_t, const spool::DecodedRecord&,
                                     uint64_t)>& send,
    const std::function<bool(const Batch&)>& full) {
  uint64_t durable;
  {
    std::lock_guard<std::mutex> lock(mu_);
    durable = durable_seq_;
    // Almost always empty; copied whole, since comparing sizes would miss a
    // range erased (committed) and another added.
    withdrawn_seen_ = withdrawn_;
  }
  while (batch.last < durable && !full(batch)) {
    absl::Status sent;
    const uint64_t before = batch.last;
    absl::Status read = store_->Scan(
        batch.last + 1, durable, [&](uint64_t seq, std::string_view stored) {
          sent = Visit(batch, seq, stored, send);
          return sent.ok() && !full(batch);
        });
    if (!sent.ok()) return sent;
    if (read.ok()) {
      if (!full(batch) && batch.last < durable) {
        // Written, synced, and not there: lost.
        QuarantineMissing(batch.last + 1, durable,
                          "their spool data was lost or unreadable");
        batch.last = durable;
      }
      break;
    }
    // RocksDB could not read on (e.g. a damaged SST block): take the next
    // record on its own, then scan on after it.
    const uint64_t seq = batch.last + 1;
    absl::StatusOr<std::optional<std::string>> one = store_->Get(seq);
    if (one.ok() && one->has_value()) {
      sent = Visit(batch, seq, **one, send);
      if (!sent.ok()) return sent;
    } else {
      QuarantineMissing(
          seq, seq,
          absl::StrCat("unreadable: ",
                       one.ok() ? read.message() : one.status().message()));
      batch.last = seq;
    }
    if (batch.last == before) break;  // no progress: give up this round
  }
  return absl::OkStatus();
}

void SpooledProducer::Impl::WarmUp(std::string_view topic) {
  // Runs per record: most follow one of the same topic.
  if (topic == last_warm_topic_) return;
  if (auto it = warm_topics_.find(topic); it != warm_topics_.end()) {
    last_warm_topic_ = *it;
    return;
  }
  rd_kafka_t* rk = txn_producer_ != nullptr
                       ? internal::ProducerAccess::Handle(*txn_producer_)
                   : producer_ != nullptr
                       ? internal::ProducerAccess::Handle(*producer_)
                       : nullptr;
  if (rk == nullptr) return;
  // Best effort: without it the first record just waits a little longer.
  internal::WarmUpTopic(rk, std::string(topic), std::chrono::seconds(5))
      .IgnoreError();
  last_warm_topic_ = *warm_topics_.emplace(topic).first;
}

Record SpooledProducer::Impl::WithHeaders(const spool::DecodedRecord& d,
                                          uint64_t seq,
                                          std::vector<Header>& headers,
                                          std::string& seq_text) {
  Record r = d.AsRecord();
  if (!stamp_headers_) return r;
  headers = d.headers;
  seq_text = absl::StrCat(seq);
  headers.push_back({kSpoolIdHeader, spool_id_});
  headers.push_back({kSpoolSeqHeader, seq_text});
  r.headers = headers;
  return r;
}

absl::Status SpooledProducer::Impl::DrainExactlyOnce() {
  uint64_t previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    previous = committed_seq_;
  }
  Batch batch;
  Clock::time_point collected;
  const std::string checkpoint_key = spool::CheckpointKey(transactional_id_);
  std::vector<Header> headers;
  std::string seq_text;
  absl::Status status = txn_producer_->Transact([&](Transaction& txn) {
    // A re-run (after an abort) starts over from the watermark.
    batch = Batch{.last = previous};
    const auto deadline = Clock::now() + options_.max_batch_time;
    auto full = [&](const Batch& b) {
      return b.records >= options_.max_batch_records ||
             b.bytes >= options_.max_batch_bytes;
    };
    auto send = [&](uint64_t seq, const spool::DecodedRecord& d,
                    uint64_t) -> absl::Status {
      WarmUp(d.topic);
      absl::Status s = txn.Send(WithHeaders(d, seq, headers, seq_text));
      if (s.ok()) sent_.fetch_add(1, std::memory_order_relaxed);
      return s;
    };
    for (;;) {
      if (absl::Status s = CollectRecords(batch, send, full); !s.ok()) {
        return s;
      }
      if (full(batch) || Clock::now() >= deadline) break;
      if (stopping_.load()) break;
      std::unique_lock<std::mutex> lock(mu_);
      // A Flush() waiting, or a Send waiting for room: commit what there is
      // rather than wait for more (room comes back only with a commit).
      auto hurry = [&] {
        return flushes_waiting_ > 0 || room_waiters_ > 0 || room_refused_;
      };
      if (hurry() && durable_seq_ <= batch.last) break;
      records_cv_.wait_until(lock, deadline, [&] {
        return durable_seq_ > batch.last || stopping_.load() || hurry();
      });
    }
    if (batch.last == previous) return absl::OkStatus();  // nothing at all
    collected = Clock::now();
    const std::string value = spool::EncodeCheckpoint(spool_id_, batch.last);
    return txn.Send({.topic = options_.checkpoint_topic,
                     .key = checkpoint_key,
                     .value = value,
                     .partition = checkpoint_partition_});
  });
  if (!status.ok()) return status;
  if (batch.last == previous) return absl::OkStatus();
  const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(
      Clock::now() - collected);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_commit_latency_ = latency;
    max_commit_latency_ = std::max(max_commit_latency_, latency);
    total_commit_latency_ += latency;
  }
  Committed(batch, previous, /*ours=*/true);
  return absl::OkStatus();
}

absl::Status SpooledProducer::Impl::DrainAtLeastOnce() {
  uint64_t previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    previous = committed_seq_;
  }
  Batch batch{.last = previous};
  struct Outcome {
    uint64_t seq;
    absl::Status status;
  };
  std::mutex outcomes_mu;
  std::vector<Outcome> failures;
  std::vector<Header> headers;
  std::string seq_text;
  auto full = [&](const Batch& b) {
    return b.records >= options_.max_batch_records ||
           b.bytes >= options_.max_batch_bytes;
  };
  {
    // Remember how far sequences may go out, so that they are never reused
    // for other records even if these are lost (consumers deduplicate by
    // them). Everything up to durable_seq_ is on disk, so this creates no
    // gap.
    uint64_t durable;
    {
      std::lock_guard<std::mutex> lock(mu_);
      durable = durable_seq_;
    }
    if (absl::Status s = store_->PutSent(durable); !s.ok()) return s;
  }
  auto send = [&](uint64_t seq, const spool::DecodedRecord& d,
                  uint64_t) -> absl::Status {
    WarmUp(d.topic);
    absl::Status s = producer_->Send(
        WithHeaders(d, seq, headers, seq_text),
        [&outcomes_mu, &failures, seq](const DeliveryReport& report) {
          if (report.status.ok()) return;
          std::lock_guard<std::mutex> lock(outcomes_mu);
          failures.push_back({seq, report.status});
        });
    if (s.ok()) sent_.fetch_add(1, std::memory_order_relaxed);
    return s;
  };
  absl::Status status = CollectRecords(batch, send, full);
  const auto collected = Clock::now();
  // Every report, even when sending stopped half-way.
  absl::Status flushed;
  do {
    flushed = producer_->Flush(std::chrono::milliseconds(1000));
  } while (flushed.code() == absl::StatusCode::kDeadlineExceeded &&
           !stopping_.load());
  if (!flushed.ok()) {
    return stopping_.load() ? absl::CancelledError("the spool is closing")
                            : flushed;
  }
  uint64_t through = batch.last;
  {
    std::lock_guard<std::mutex> lock(outcomes_mu);
    for (const Outcome& f : failures) {
      through = std::min(through, f.seq - 1);
      if (status.ok()) status = f.status;
    }
  }
  if (through > previous) {
    Batch done = batch;
    if (through < batch.last) {
      // Only the prefix before the first failure counts as delivered; the
      // rest is sent again (at least once).
      done = Batch{.last = through};
      store_
          ->Scan(previous + 1, through,
                 [&](uint64_t, std::string_view v) {
                   ++done.records;
                   done.bytes += v.size();
                   return true;
                 })
          .IgnoreError();
    }
    const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(
        Clock::now() - collected);
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_commit_latency_ = latency;
      max_commit_latency_ = std::max(max_commit_latency_, latency);
      total_commit_latency_ += latency;
    }
    Committed(done, previous, /*ours=*/true);
  }
  return status;
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
