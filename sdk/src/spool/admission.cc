// Admission: a Send, SendBatch or SendAsync is checked and encoded into one
// block, gets room in the spool (waiting or failing when full) and joins the
// queue of the group commit (group_commit.cc). The completions of
// asynchronous Sends run here too, outside the lock. Touches the queue, the
// room counters (depth_, bytes_) and the asynchronous-Send counters.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spool/impl.h"

namespace exactly {

namespace spool = internal::spool;
using spool::kMaxTopicLength;
using spool::WallMs;

namespace {

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

}  // namespace

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
      WriteGroup(lock, &w);
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

}  // namespace exactly
