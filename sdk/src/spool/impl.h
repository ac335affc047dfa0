// SpooledProducer::Impl: the state the spool's parts share, and the parts'
// entry points. What each part does is in its own file:
//   spooled_producer.cc  the public API, options, open, flush, close, metrics
//   admission.cc         Send/SendBatch/SendAsync: encode, reserve room, queue
//   group_commit.cc      the two-stage group commit (write, then WAL sync)
//   drainer.cc           the thread that moves durable records into Kafka
//   recovery.cc          a (new) producer instance, and the watermark Kafka has
//   watermark.cc         records committed to Kafka: counters, waiters, deletes
//   quarantine.cc        records that cannot be sent, set aside and reported
// Every member is guarded by mu_ unless its comment says otherwise.
#ifndef EXACTLY_SDK_SRC_SPOOL_IMPL_H_
#define EXACTLY_SDK_SRC_SPOOL_IMPL_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "client/callback_guard.h"
#include "exactly/producer.h"
#include "exactly/spool.h"
#include "exactly/transactional_producer.h"
#include "spool/block.h"
#include "spool/checkpoint.h"
#include "spool/format.h"
#include "spool/store.h"

namespace exactly {
namespace internal::spool {

// Kafka's limit on topic names.
constexpr size_t kMaxTopicLength = 249;

// The range of `ranges` (first -> last) that holds `seq`, or ranges.end().
inline std::map<uint64_t, uint64_t>::const_iterator RangeHolding(
    const std::map<uint64_t, uint64_t>& ranges, uint64_t seq) {
  auto it = ranges.upper_bound(seq);
  if (it == ranges.begin()) return ranges.end();
  --it;
  return seq <= it->second ? it : ranges.end();
}

inline int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline bool HasTransactionalId(const ProducerOptions& o) {
  return !o.transactional_id.empty() ||
         o.properties.count("transactional.id") != 0;
}

inline std::string TransactionalId(const ProducerOptions& o) {
  if (!o.transactional_id.empty()) return o.transactional_id;
  auto it = o.properties.find("transactional.id");
  return it == o.properties.end() ? std::string() : it->second;
}

inline long PropertyOr(const ProducerOptions& o, const char* name,
                       long fallback) {
  auto it = o.properties.find(name);
  if (it == o.properties.end()) return fallback;
  char* end = nullptr;
  const long v = std::strtol(it->second.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? v : fallback;
}

}  // namespace internal::spool

class SpooledProducer::Impl {
 public:
  explicit Impl(const SpoolOptions& options)
      : options_(options),
        exactly_once_(internal::spool::HasTransactionalId(options.producer)),
        transactional_id_(internal::spool::TransactionalId(options.producer)),
        stamp_headers_(options.stamp_headers || !exactly_once_),
        max_message_bytes_(internal::spool::PropertyOr(
            options.producer, "message.max.bytes", 1000000)) {}
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
  using Clock = std::chrono::steady_clock;

  // One Send/SendBatch waiting for its group commit. Each has its own
  // condition variable, so that finishing a stage wakes exactly the threads
  // it concerns (on 2 cores a thundering herd costs more than the write).
  struct Waiter {
    internal::spool::BlockBuilder block;  // its records, encoded
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
    std::chrono::steady_clock::time_point started;  // its write began
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
  // written before. `caller`: the synchronous Send whose thread writes, or
  // null for the committer thread.
  void WriteGroup(std::unique_lock<std::mutex>& lock, const Waiter* caller);
  void SyncGroups(std::unique_lock<std::mutex>& lock);
  // With mu_ held: `group` is durable (or failed with `status`); wakes its
  // Sends.
  // `started`: when the group's write began (group_commit_latency_counts_).
  void FinishGroup(const std::vector<Waiter*>& group,
                   const absl::Status& status, int64_t written_ms,
                   std::chrono::steady_clock::time_point started);
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
      const std::function<absl::Status(
          uint64_t, const internal::spool::DecodedRecord&, uint64_t)>& send,
      const std::function<bool(const Batch&)>& full);
  // Handles one record of a collection (checks, quarantines, sends).
  absl::Status Visit(
      Batch& batch, uint64_t seq, std::string_view stored,
      const std::function<absl::Status(
          uint64_t, const internal::spool::DecodedRecord&, uint64_t)>& send);
  void QuarantineRecord(uint64_t seq, std::string_view stored,
                        const std::string& reason);
  void QuarantineMissing(uint64_t first, uint64_t last, const std::string& why);
  // Marks everything through batch.last committed: metrics, waiters, and the
  // local delete. `our_latency` is set when this instance's own commit did it
  // (a drain batch, not a watermark found at recovery): its commit latency.
  void Committed(const Batch& batch, uint64_t previous,
                 std::optional<std::chrono::microseconds> our_latency);
  void ApplyWatermark(uint64_t watermark);
  bool WaitForRecords(Clock::time_point deadline);
  Record WithHeaders(const internal::spool::DecodedRecord& d, uint64_t seq,
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
  // Drainer thread only: a recovery has read Kafka's checkpoint. From then
  // on the checkpoint may name any sequence this instance handed out (its
  // own commits, also one whose answer it never got), not only the ones
  // the spool held when opened.
  bool checkpoint_read_ = false;

  std::unique_ptr<internal::spool::SpoolStore> store_;

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
  // Of the group commits that succeeded (see SpoolMetrics), under mu_.
  std::array<uint64_t, kGroupCommitLatencyBounds.size() + 1>
      group_commit_latency_counts_{};
  std::chrono::microseconds group_commit_latency_sum_{0};
  std::array<uint64_t, kGroupCommitSizeBounds.size() + 1>
      group_commit_size_counts_{};
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
  std::unique_ptr<internal::spool::CheckpointReader> reader_;
  std::set<std::string, std::less<>> warm_topics_;  // of the current producer
  std::string_view last_warm_topic_;                // into warm_topics_
  std::map<uint64_t, uint64_t> withdrawn_seen_;     // withdrawn_, as last read

  std::thread drainer_;
  std::thread syncer_;
  std::thread write_committer_;
  std::thread sync_committer_;
};

}  // namespace exactly

#endif  // EXACTLY_SDK_SRC_SPOOL_IMPL_H_
