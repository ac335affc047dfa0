// The watermark: every sequence through it is in Kafka. Moving it frees room
// (waking Sends that wait for it and Flush calls), updates the counters, and
// deletes the committed records from the store.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spool/impl.h"

namespace exactly {

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
  Committed(batch, previous, /*our_latency=*/std::nullopt);
}

void SpooledProducer::Impl::Committed(
    const Batch& batch, uint64_t previous,
    std::optional<std::chrono::microseconds> our_latency) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    committed_seq_ = batch.last;
    room_refused_ = false;
    depth_ -= std::min(depth_, batch.records);
    bytes_ -= std::min(bytes_, batch.bytes);
    if (our_latency.has_value()) {
      committed_records_ += batch.records;
      ++transactions_;
      last_commit_latency_ = *our_latency;
      max_commit_latency_ = std::max(max_commit_latency_, *our_latency);
      total_commit_latency_ += *our_latency;
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

}  // namespace exactly
