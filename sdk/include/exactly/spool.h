// The durable spool: Send() returns once the record is on local disk, and a
// background drainer carries it into Kafka. With a transactional.id, every
// record whose Send() returned OK appears in Kafka exactly once, in order per
// partition, whatever is killed when; without one, at least once.
//
//   exactly::SpoolOptions opts;
//   opts.dir = "/var/lib/orders/spool";
//   opts.producer.bootstrap_servers = "localhost:9092";
//   opts.producer.transactional_id = "orders-writer-1";
//   auto spool = exactly::SpooledProducer::Create(opts);
//   absl::Status s = (*spool)->Send({.topic = "orders", .key = id,
//                                    .value = payload});
//   // OK: the record is synced to disk and will reach Kafka exactly once.
//
// How it works (docs/spool.md has the whole story):
//
// Spool. One RocksDB database per directory, locked by its owner. Each
// record gets a sequence number (never reused, even after every record was
// deleted: the next sequence is persisted with each write) and a CRC-32C
// over its bytes and its sequence. Concurrent Send()s join one group
// commit: one write batch and one WAL sync for all of them; SendBatch()
// does the same for one caller's records.
//
// Drainer. One thread reads the spool in sequence order and sends it
// through the SDK's TransactionalProducer, in transactions bounded by
// max_batch_records, max_batch_bytes and max_batch_time. Each transaction
// also writes, to the compacted checkpoint topic, the record
// key = "spool/<transactional.id>", value = the spool id and the last
// sequence in the transaction. Kafka then holds, atomically with the
// records themselves, how far the spool has been delivered. After the
// commit the drainer deletes those records locally.
//
// Recovery. A new instance (1) initialises transactions, which fences the
// old instance and completes or aborts its last transaction; (2) commits a
// probe record (key "probe/<transactional.id>", a fresh nonce) to the same
// checkpoint partition; (3) reads that partition with read_committed until
// it sees its own probe: every transaction of the old instance is resolved
// and lies before the probe, so the last checkpoint seen before it is the
// true committed watermark W. It deletes the records <= W and sends the rest.
//   - crash after a commit, before the local delete: W covers the records;
//     they are deleted, not sent again;
//   - crash in the middle of a transaction: step (1) aborts it; its records
//     are > W and are sent again, and read_committed consumers never saw the
//     aborted copies;
//   - crash with records spooled but never sent: they are > W; sent.
//
// Cursor. Send(record, cursor) stores an application position (a file
// offset, a source id) atomically with the record; after a restart,
// recovered_cursor() is the cursor of the last record in the spool, so the
// application resumes exactly after it. A Send() cut short by a crash may
// or may not have made it to disk; the cursor says which.
//
// Without a transactional.id the drainer uses the idempotent Producer and
// deletes records once their delivery is acknowledged: after a crash the
// unacknowledged ones are sent again, so delivery is at least once. Each
// record then carries the headers "exactly.spool.id" and "exactly.spool.seq"
// (decimal), which identify it uniquely: consumers can drop duplicates.
//
// Send, SendBatch, Flush and metrics() are thread-safe. Close (and the
// destructor) must not race with them.
#ifndef EXACTLY_SPOOL_H_
#define EXACTLY_SPOOL_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/options.h"
#include "exactly/record.h"

namespace rocksdb {
class Env;
}

namespace exactly {

// When Send() forces the spool's write-ahead log to stable storage.
enum class SyncPolicy {
  // Before Send() returns (default): nothing acknowledged is ever lost, not
  // even to a power cut.
  kAlways,
  // Every sync_interval: Send() returns once the record is written to the
  // operating system. A killed process loses nothing; a power cut or kernel
  // crash loses at most the records acknowledged in the last sync_interval.
  kInterval,
  // Never explicitly (the OS writes back when it likes, typically within 30
  // s): a killed process loses nothing; a power cut may lose any record
  // acknowledged since the OS last wrote back.
  kNone,
};

// What Send() does when the spool holds max_records or max_bytes.
enum class SpoolFullPolicy {
  kBlock,  // wait for the drainer to make room, up to full_timeout
  kFail,   // fail at once with RESOURCE_EXHAUSTED
};

struct SpoolOptions {
  // The spool's directory (created if missing); one owner at a time.
  std::string dir;
  // Where and how the drainer sends. A transactional_id makes delivery
  // exactly-once (it must be unique to this spool and stable across
  // restarts); without one delivery is at-least-once, with dedup headers.
  ProducerOptions producer;

  SyncPolicy sync = SyncPolicy::kAlways;
  std::chrono::milliseconds sync_interval{100};  // for kInterval

  // Bounds on what the spool holds (records not yet committed to Kafka).
  uint64_t max_records = 1'000'000;
  uint64_t max_bytes = uint64_t{1} << 30;
  SpoolFullPolicy when_full = SpoolFullPolicy::kBlock;
  std::chrono::milliseconds full_timeout{30000};

  // One transaction (or, at-least-once, one batch) ends at whichever comes
  // first. max_batch_time must be shorter than transaction.timeout.ms. As
  // with Kafka Streams' 100 ms commit interval under exactly-once, the time
  // normally decides; the record and byte bounds cap a burst. (A commit
  // costs a few ms whatever its size, so small transactions cap the drain
  // rate: 10,000 records each drained 457k records/s in spool_bench where
  // this default drains 524k.)
  size_t max_batch_records = 100000;
  size_t max_batch_bytes = 8 << 20;
  std::chrono::milliseconds max_batch_time{100};

  // The compacted topic holding each spool's committed sequence. Created
  // (cleanup.policy=compact, 1 partition) when missing and
  // create_checkpoint_topic is set.
  std::string checkpoint_topic = "__exactly_spool_checkpoints";
  bool create_checkpoint_topic = true;
  // How long one recovery may wait for the checkpoint to be read back
  // before it is retried.
  std::chrono::milliseconds recovery_timeout{60000};

  // Stamp "exactly.spool.id" / "exactly.spool.seq" headers on every record.
  // Always on without a transactional_id.
  bool stamp_headers = false;

  // Receives what has no call to return it to: quarantined records, drainer
  // errors (each retried), recovery reports. Unset: printed to stderr.
  ErrorCallback on_error;

  // For tests: the RocksDB environment (e.g. one that injects disk-full
  // errors). Not owned; must outlive the producer.
  rocksdb::Env* env = nullptr;
};

// The upper bounds of SpoolMetrics::group_commit_latency_counts' buckets.
inline constexpr std::array<std::chrono::microseconds, 12>
    kGroupCommitLatencyBounds = {
        std::chrono::microseconds(100),    std::chrono::microseconds(250),
        std::chrono::microseconds(500),    std::chrono::microseconds(1000),
        std::chrono::microseconds(2500),   std::chrono::microseconds(5000),
        std::chrono::microseconds(10000),  std::chrono::microseconds(25000),
        std::chrono::microseconds(50000),  std::chrono::microseconds(100000),
        std::chrono::microseconds(250000), std::chrono::microseconds(1000000)};
// The upper bounds of SpoolMetrics::group_commit_size_counts' buckets.
inline constexpr std::array<uint64_t, 12> kGroupCommitSizeBounds = {
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};

struct SpoolMetrics {
  // What the spool holds: records not yet committed to Kafka.
  uint64_t depth = 0;
  uint64_t bytes = 0;                       // their stored size
  std::chrono::milliseconds oldest_age{0};  // of the oldest one; 0 if empty
  uint64_t disk_bytes = 0;                  // the database's WAL and SST files
  // Counts since this instance was created.
  uint64_t appended = 0;       // records accepted by Send/SendBatch
  uint64_t sent = 0;           // records handed to the producer (with re-sends)
  uint64_t committed = 0;      // records committed to Kafka (acknowledged,
                               // at-least-once) and deleted from the spool
  uint64_t transactions = 0;   // transactions (batches) committed
  uint64_t group_commits = 0;  // spool writes (each one WAL sync with
                               // SyncPolicy::kAlways)
  // Each group commit (spool write) that succeeded: how long it took, from
  // the start of its write until it was durable (its WAL sync done with
  // SyncPolicy::kAlways, else its write): group_commit_latency_counts[i] of
  // them took more than kGroupCommitLatencyBounds[i - 1] and at most
  // kGroupCommitLatencyBounds[i]; the last element, more than every bound.
  std::array<uint64_t, kGroupCommitLatencyBounds.size() + 1>
      group_commit_latency_counts{};
  std::chrono::microseconds group_commit_latency_sum{0};
  // And how many records it wrote, bucketed by kGroupCommitSizeBounds the
  // same way. Their sum is appended.
  std::array<uint64_t, kGroupCommitSizeBounds.size() + 1>
      group_commit_size_counts{};
  uint64_t recoveries = 0;      // times the drainer learnt the watermark anew
  uint64_t drainer_errors = 0;  // failed transactions / recoveries, retried
  std::chrono::microseconds last_commit_latency{0};
  std::chrono::microseconds max_commit_latency{0};
  std::chrono::microseconds mean_commit_latency{0};
  // Records in the quarantine (damaged or missing), including earlier
  // instances'.
  uint64_t quarantined = 0;
  // Sequences: the next one to hand out, the last one committed.
  uint64_t next_sequence = 0;
  uint64_t committed_sequence = 0;
  // OK, or why the drainer stopped for good (fenced by another instance).
  absl::Status drainer_status;
};

// A quarantined record, as kept in the spool.
struct QuarantinedRecord {
  uint64_t sequence = 0;  // 0 if unknown
  uint64_t records = 1;   // > 1: a run of missing sequences
  std::string reason;
  std::string bytes;  // as found (empty for missing records)
  int64_t quarantined_ms = 0;
};

class SpooledProducer {
 public:
  // Opens (or creates) the spool, recovers it (salvaging and quarantining
  // damaged records), and starts the drainer, which learns the committed
  // watermark from Kafka in the background: Create() does not need Kafka.
  static absl::StatusOr<std::unique_ptr<SpooledProducer>> Create(
      const SpoolOptions& options);
  ~SpooledProducer();  // Close(0): what is not yet in Kafka stays spooled

  SpooledProducer(const SpooledProducer&) = delete;
  SpooledProducer& operator=(const SpooledProducer&) = delete;

  // Appends `record` to the spool and returns once it is durable (see
  // SyncPolicy). OK means the record will reach Kafka (exactly once with a
  // transactional.id). An error means it was not spooled: INVALID_ARGUMENT
  // (bad topic, too large), RESOURCE_EXHAUSTED (spool full, or no space on
  // the disk: nothing accepted before is affected), FAILED_PRECONDITION
  // (closed). A record's timestamp 0 becomes the time of Send().
  absl::Status Send(const Record& record);
  // The same, storing `cursor` atomically with the record.
  absl::Status Send(const Record& record, std::string_view cursor);
  // Appends `records` in order with one write and one sync: all or none.
  absl::Status SendBatch(std::span<const Record> records,
                         std::string_view cursor = {});

  // Appends `records` (one write, all or none, like SendBatch) without
  // waiting for the disk: returns once they are admitted, that is checked,
  // encoded, given room in the spool (waiting for room as when_full says)
  // and queued for the next group commit. It also waits while earlier
  // SendAsync calls holding more than 16 MiB (encoded) are not yet durable,
  // which bounds the memory a fast caller ties up (a call made from a
  // completion does not wait). `on_durable` then runs once, on a
  // spool thread or on a Send that finished the group commit, with the
  // outcome SendBatch would have returned: OK once the records are durable
  // (see SyncPolicy), or why they were not spooled. Keep it short; it may
  // send again but must not call Flush or Close. An error returned here
  // means nothing was admitted and `on_durable` never runs (an empty
  // `records` completes at once, on the calling thread). Calls are written
  // in the order they were admitted, so after a crash the spool holds a
  // prefix of them; but a call that failed (no space left) may be followed
  // by calls that succeeded. This is the spool's fast path: the caller need
  // not wait for each fsync, so one thread keeps many group commits' worth
  // of records in flight (as librdkafka's produce() with a delivery
  // callback does).
  absl::Status SendAsync(std::span<const Record> records,
                         std::function<void(const absl::Status&)> on_durable,
                         std::string_view cursor = {});

  // Waits until every record appended before the call (SendAsync's
  // included) is committed to Kafka (or quarantined). DEADLINE_EXCEEDED if not
  // within `timeout`; the drainer's error if it stopped for good.
  absl::Status Flush(std::chrono::milliseconds timeout);
  absl::Status WaitDrained(std::chrono::milliseconds timeout) {
    return Flush(timeout);
  }

  // Refuses further Sends, waits up to `drain_timeout` for the spool to
  // drain, then stops the drainer (aborting an open transaction) and closes
  // the spool. Records not yet in Kafka stay in the spool for the next
  // instance; then it returns DEADLINE_EXCEEDED saying how many. Later
  // calls return OK.
  absl::Status Close(
      std::chrono::milliseconds drain_timeout = std::chrono::milliseconds(0));

  // The cursor of the last record in the spool when it was opened ("" if
  // none had one).
  const std::string& recovered_cursor() const;
  // This spool's id (random, fixed when the directory was created).
  const std::string& spool_id() const;
  bool exactly_once() const;

  SpoolMetrics metrics() const;
  std::vector<QuarantinedRecord> Quarantined() const;

 private:
  class Impl;
  explicit SpooledProducer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Checks `options` without opening anything: names the first setting that
// is missing or unsafe.
absl::Status Validate(const SpoolOptions& options);

}  // namespace exactly

#endif  // EXACTLY_SPOOL_H_
