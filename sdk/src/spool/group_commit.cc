// The group commit: every queued Send is written to RocksDB in one write
// batch, then made durable with one WAL sync; writing group k+1 overlaps
// syncing group k. Whoever finds a stage free does it, a Send's own thread or
// a committer thread for asynchronous Sends. Touches the queue, the written
// groups, next_seq_ and durable_seq_, and wakes the drainer.
#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spool/impl.h"

namespace exactly {

namespace spool = internal::spool;
using spool::WallMs;

namespace {

// The most a group commit writes at once (record bytes): beyond this the
// rest waits for the next write, which overlaps this group's sync.
constexpr uint64_t kMaxGroupBytes = 4 << 20;

}  // namespace

// Wakes whoever should take a stage next: the Send that waits for it, or
// that stage's committer thread if the first in line is an asynchronous Send.
void SpooledProducer::Impl::WakeForStage(Stage stage, Waiter* first) {
  if (first->on_durable) {
    (stage == Stage::kWrite ? write_cv_ : sync_cv_).notify_one();
  } else {
    first->wake.notify_one();
  }
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
      WriteGroup(lock, /*caller=*/nullptr);
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
void SpooledProducer::Impl::WriteGroup(std::unique_lock<std::mutex>& lock,
                                       const Waiter* caller) {
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
  const auto started = std::chrono::steady_clock::now();
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
    FinishGroup(group, status, now_ms, started);
  } else if (options_.sync == SyncPolicy::kAlways) {
    for (Waiter* w : group) w->written = true;
    unsynced_.push_back({std::move(group), now_ms, started});
    // Nobody syncing: unless the calling Send syncs next (it was written),
    // wake whoever syncs for the first written group. Not only for
    // asynchronous Sends: the committer may have written a group of
    // synchronous ones, whose threads sleep until woken (the asynchronous
    // call that had the committer running may have completed meanwhile).
    if (!syncing_ && (caller == nullptr || !caller->written)) {
      WakeForStage(Stage::kSync, unsynced_.front().sends.front());
    }
  } else {
    FinishGroup(group, status, now_ms, started);
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
    FinishGroup(g.sends, status, g.written_ms, g.started);
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

void SpooledProducer::Impl::FinishGroup(
    const std::vector<Waiter*>& group, const absl::Status& status,
    int64_t written_ms, std::chrono::steady_clock::time_point started) {
  const uint64_t first_seq = group.front()->first_seq;
  uint64_t records = 0;
  for (Waiter* w : group) records += w->block.records();
  if (status.ok()) {
    durable_seq_ = first_seq + records - 1;
    appended_ += records;
    ++group_commits_;
    // Under mu_, which every group commit holds here anyway.
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - started);
    ++group_commit_latency_counts_[std::lower_bound(
                                       kGroupCommitLatencyBounds.begin(),
                                       kGroupCommitLatencyBounds.end(), took) -
                                   kGroupCommitLatencyBounds.begin()];
    group_commit_latency_sum_ += took;
    ++group_commit_size_counts_[std::lower_bound(kGroupCommitSizeBounds.begin(),
                                                 kGroupCommitSizeBounds.end(),
                                                 records) -
                                kGroupCommitSizeBounds.begin()];
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

}  // namespace exactly
