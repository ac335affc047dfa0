// The drainer: one thread that moves durable records into Kafka, in batches.
// Exactly-once: each batch is one transaction that also carries the
// checkpoint (the last sequence it covers). At-least-once: an idempotent
// producer, each record stamped with the spool id and its sequence. Reads
// the store; damaged or missing records go to the quarantine
// (quarantine.cc); what Kafka acknowledged moves the watermark
// (watermark.cc). Only this thread touches the producers.
#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/retry.h"
#include "exactly/error.h"
#include "producer/producer_access.h"
#include "spool/impl.h"

namespace exactly {

namespace spool = internal::spool;
using spool::RangeHolding;

namespace {

constexpr char kSpoolIdHeader[] = "exactly.spool.id";
constexpr char kSpoolSeqHeader[] = "exactly.spool.seq";

}  // namespace

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
  Committed(batch, previous,
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                                  collected));
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
    Committed(done, previous,
              std::chrono::duration_cast<std::chrono::microseconds>(
                  Clock::now() - collected));
  }
  return status;
}

}  // namespace exactly
