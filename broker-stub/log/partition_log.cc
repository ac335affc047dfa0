#include "log/partition_log.h"

#include <algorithm>

namespace exactly::broker {

StoredBatch& PartitionLog::Append(SharedBuffer owner, char* data, size_t size,
                                  const protocol::RecordBatchHeader& header,
                                  int32_t leader_epoch) {
  StoredBatch& stored = batches_.emplace_back();
  stored.owner = std::move(owner);
  stored.data = data;
  stored.size = size;
  stored.header = header;
  stored.header.base_offset = log_end_offset_;
  stored.header.partition_leader_epoch = leader_epoch;
  protocol::SetBatchBaseOffset(data, log_end_offset_);
  protocol::SetBatchLeaderEpoch(data, leader_epoch);
  log_end_offset_ = stored.next_offset();
  size_in_bytes_ += size;
  return stored;
}

void PartitionLog::Rewrite(std::vector<BatchRewrite> rewrites) {
  std::deque<StoredBatch> kept;
  size_t next = 0;
  for (size_t i = 0; i < batches_.size(); ++i) {
    StoredBatch& batch = batches_[i];
    if (next == rewrites.size() || rewrites[next].index != i) {
      kept.push_back(std::move(batch));
      continue;
    }
    std::optional<std::string>& bytes = rewrites[next++].bytes;
    size_in_bytes_ -= batch.size;
    if (!bytes) continue;
    absl::StatusOr<protocol::RecordBatchHeader> header =
        protocol::ParseBatchHeader(*bytes);
    if (!header.ok()) {  // the cleaner built it: cannot happen
      size_in_bytes_ += batch.size;
      kept.push_back(std::move(batch));
      continue;
    }
    batch.owner = CopyToSharedBuffer(*bytes);
    batch.data = batch.owner.get();
    batch.size = bytes->size();
    batch.header = *header;
    size_in_bytes_ += batch.size;
    kept.push_back(std::move(batch));
  }
  batches_ = std::move(kept);
}

size_t PartitionLog::CopyOut(const FrameEvacuation& plan) {
  size_t copied = 0;
  for (StoredBatch& batch : batches_) {
    if (!plan.Contains(batch.data)) continue;
    // Readers holding the old owner (a Fetch being written) keep it alive.
    batch.owner = CopyToSharedBuffer(batch.bytes());
    batch.data = batch.owner.get();
    copied += batch.size;
  }
  return copied;
}

void PartitionLog::Restore(std::string_view bytes,
                           const protocol::RecordBatchHeader& header) {
  if (batches_.empty())
    log_start_offset_ = std::max(log_start_offset_, header.base_offset);
  StoredBatch& stored = batches_.emplace_back();
  stored.owner = CopyToSharedBuffer(bytes);
  stored.data = stored.owner.get();
  stored.size = bytes.size();
  stored.header = header;
  log_end_offset_ = stored.next_offset();
  high_watermark_ = log_end_offset_;
  durable_end_offset_ = log_end_offset_;
  size_in_bytes_ += stored.size;
}

void PartitionLog::AdvanceHighWatermark(int64_t offset) {
  high_watermark_ =
      std::max(high_watermark_, std::min(offset, log_end_offset_));
}

size_t PartitionLog::FindBatch(int64_t offset) const {
  auto it = std::partition_point(
      batches_.begin(), batches_.end(),
      [&](const StoredBatch& b) { return b.last_offset() < offset; });
  return static_cast<size_t>(it - batches_.begin());
}

LogSlice PartitionLog::Read(int64_t offset, int64_t limit, size_t max_bytes,
                            bool first_batch_always) const {
  LogSlice slice;
  for (size_t i = FindBatch(offset); i < batches_.size(); ++i) {
    const StoredBatch& b = batches_[i];
    if (b.base_offset() >= limit) break;
    // A batch that straddles `limit` is not returned: readers may only see
    // whole batches below the limit (the HWM or the LSO always falls on a batch
    // boundary).
    if (b.next_offset() > limit) break;
    bool first = slice.batches.empty();
    if (slice.bytes + b.size > max_bytes && !(first && first_batch_always))
      break;
    slice.batches.push_back(b.bytes());
    slice.owners.push_back(b.owner);
    slice.bytes += b.size;
    slice.next_offset = b.next_offset();
  }
  return slice;
}

std::optional<PartitionLog::TimestampOffset> PartitionLog::OffsetForTimestamp(
    int64_t timestamp) const {
  for (size_t i = FindBatch(log_start_offset_); i < batches_.size(); ++i) {
    const StoredBatch& b = batches_[i];
    if (b.next_offset() > high_watermark_) break;
    if (b.header.max_timestamp < timestamp || b.header.is_control()) continue;
    absl::StatusOr<std::vector<protocol::Record>> records =
        protocol::DecodeRecords({b.header, b.bytes()});
    if (!records.ok())
      continue;  // validated on append; unreadable only if corrupted later
    for (const protocol::Record& r : *records) {
      if (r.timestamp >= timestamp && r.offset >= log_start_offset_) {
        return TimestampOffset{r.offset, r.timestamp};
      }
    }
  }
  return std::nullopt;
}

std::vector<int64_t> PartitionLog::DeleteBefore(int64_t offset) {
  std::vector<int64_t> removed;
  offset = std::min(offset, log_end_offset_);
  while (!batches_.empty() && batches_.front().next_offset() <= offset) {
    removed.push_back(batches_.front().base_offset());
    size_in_bytes_ -= batches_.front().size;
    batches_.pop_front();
  }
  log_start_offset_ = std::max(log_start_offset_, offset);
  return removed;
}

std::vector<StoredBatch> PartitionLog::TruncateTo(int64_t offset) {
  std::vector<StoredBatch> removed;
  while (!batches_.empty() && batches_.back().last_offset() >= offset) {
    size_in_bytes_ -= batches_.back().size;
    removed.push_back(std::move(batches_.back()));
    batches_.pop_back();
  }
  std::reverse(removed.begin(), removed.end());
  if (!removed.empty()) log_end_offset_ = removed.front().base_offset();
  if (offset < log_start_offset_) {
    // Nothing this log holds is kept: it starts again where it now ends.
    log_start_offset_ = std::min(log_start_offset_, log_end_offset_);
  }
  high_watermark_ = std::min(high_watermark_, log_end_offset_);
  durable_end_offset_ = std::min(durable_end_offset_, log_end_offset_);
  return removed;
}

int64_t PartitionLog::RetentionStartOffset(int64_t retain_bytes,
                                           int64_t limit) const {
  if (retain_bytes < 0 || size_in_bytes_ <= static_cast<size_t>(retain_bytes)) {
    return log_start_offset_;
  }
  size_t size = size_in_bytes_;
  int64_t start = log_start_offset_;
  for (const StoredBatch& b : batches_) {
    if (size <= static_cast<size_t>(retain_bytes) || b.next_offset() > limit)
      break;
    size -= b.size;
    start = b.next_offset();
  }
  return start;
}

void PartitionLog::StartEmptyAt(int64_t offset) {
  if (!batches_.empty()) return;
  log_start_offset_ = log_end_offset_ = high_watermark_ = durable_end_offset_ =
      offset;
}

void PartitionLog::RestoreLogStartOffset(int64_t offset) {
  log_start_offset_ = offset;
  if (batches_.empty()) {
    log_end_offset_ = std::max(log_end_offset_, offset);
    high_watermark_ = std::max(high_watermark_, offset);
    durable_end_offset_ = std::max(durable_end_offset_, offset);
  }
}

}  // namespace exactly::broker
