// Group commit: everything the event loop stages in the store while handling
// one turn of requests is committed in one write at the end of that turn, and
// only then are those requests answered and their records made visible (high
// watermark). In memory the store is absent and the same path runs without the
// write, so both modes order responses alike.
#ifndef EXACTLY_BROKER_CLUSTER_COMMIT_PIPELINE_H_
#define EXACTLY_BROKER_CLUSTER_COMMIT_PIPELINE_H_

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <cstdint>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "exactly/broker/broker.h"
#include "storage/store.h"

namespace exactly::broker {

class CommitPipeline {
 public:
  CommitPipeline(asio::io_context& io, Store* store, FlushPolicy flush);
  ~CommitPipeline();

  // Runs `done` once everything staged so far is committed: with OkStatus, or
  // with the store's error. Callbacks run in the order they were registered.
  void AfterCommit(absl::AnyInvocable<void(const absl::Status&)> done);

  // Counts appended records towards the flush policy's message trigger.
  void NoteAppended(int64_t records) { staged_records_ += records; }

  // Makes sure what is staged now gets committed at the end of this turn, with
  // no callback.
  void CommitSoon() { ScheduleCommit(); }

  // Commits now (used at shutdown and by tests).
  void CommitNow();

  int64_t commits() const { return commits_; }
  int64_t syncs() const { return syncs_; }

 private:
  void ScheduleCommit();
  void ArmFlushTimer();

  asio::io_context& io_;
  Store* store_;  // null in memory
  FlushPolicy flush_;
  std::vector<absl::AnyInvocable<void(const absl::Status&)>> waiting_;
  bool scheduled_ = false;
  int64_t staged_records_ = 0;    // appended, not yet committed
  int64_t unsynced_records_ = 0;  // committed, not yet synced
  int64_t commits_ = 0;
  int64_t syncs_ = 0;
  asio::steady_timer flush_timer_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_COMMIT_PIPELINE_H_
