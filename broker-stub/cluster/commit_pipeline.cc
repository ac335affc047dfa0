#include "cluster/commit_pipeline.h"

#include <algorithm>
#include <asio/post.hpp>

#include "util/logging.h"

namespace exactly::broker {

CommitPipeline::CommitPipeline(asio::io_context& io, Store* store,
                               FlushPolicy flush)
    : io_(io), store_(store), flush_(flush), flush_timer_(io) {
  if (store_ != nullptr && flush_.every_ms > 0) ArmFlushTimer();
}

CommitPipeline::~CommitPipeline() { flush_timer_.cancel(); }

void CommitPipeline::AfterCommit(
    absl::AnyInvocable<void(const absl::Status&)> done) {
  waiting_.push_back(std::move(done));
  ScheduleCommit();
}

void CommitPipeline::ScheduleCommit() {
  if (scheduled_) return;
  scheduled_ = true;
  // A posted handler runs after the handlers already queued in this turn of the
  // loop: the other connections' requests that arrived together share this
  // commit.
  asio::post(io_, [this] { CommitNow(); });
}

void CommitPipeline::CommitNow() {
  scheduled_ = false;
  absl::Status status;
  if (store_ != nullptr && store_->HasStagedWrites()) {
    status = store_->Commit();
    ++commits_;
    // A write of coordinator state alone (PrepareCommit, a group's offsets)
    // counts as one message: in Kafka it is a record in __transaction_state or
    // __consumer_offsets, under the same flush policy. Without this a power
    // loss could take back a commit that EndTxn had already acknowledged.
    unsynced_records_ += std::max<int64_t>(staged_records_, 1);
    staged_records_ = 0;
    if (status.ok() && flush_.every_messages > 0 &&
        unsynced_records_ >= flush_.every_messages) {
      status = store_->Sync();
      ++syncs_;
      unsynced_records_ = 0;
    }
    if (!status.ok()) LogError("store: ", status.message());
  }
  std::vector<absl::AnyInvocable<void(const absl::Status&)>> done;
  done.swap(waiting_);
  for (auto& callback : done) callback(status);
}

void CommitPipeline::ArmFlushTimer() {
  flush_timer_.expires_after(std::chrono::milliseconds(flush_.every_ms));
  flush_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    if (unsynced_records_ > 0) {
      absl::Status s = store_->Sync();
      ++syncs_;
      unsynced_records_ = 0;
      if (!s.ok()) LogError("store: ", s.message());
    }
    ArmFlushTimer();
  });
}

}  // namespace exactly::broker
