// One partition's log: record batches in offset order, as the producers sent
// them (with the broker's base offset written in), plus the offsets that bound
// what readers may see.
//
//   log_start_offset <= high_watermark <= log_end_offset
//
// The log end offset (LEO) is where the next append goes. The high watermark
// (HWM) is the end of what is durable in the broker's store: appends become
// visible to readers only when the store has committed them. Records below
// log_start_offset were deleted (retention, DeleteRecords).
#ifndef EXACTLY_BROKER_LOG_PARTITION_LOG_H_
#define EXACTLY_BROKER_LOG_PARTITION_LOG_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/record_batch.h"
#include "util/frame_arena.h"
#include "util/shared_buffer.h"

namespace exactly::broker {

struct StoredBatch {
  protocol::RecordBatchHeader header;  // base_offset is the broker-assigned one
  // The whole batch as stored and served. It usually lives inside the request
  // frame it arrived in (`owner`), written in place where the broker sets its
  // offsets.
  SharedBuffer owner;
  char* data = nullptr;
  size_t size = 0;

  std::string_view bytes() const { return {data, size}; }
  int64_t base_offset() const { return header.base_offset; }
  int64_t last_offset() const { return header.last_offset(); }
  int64_t next_offset() const { return header.last_offset() + 1; }
};

// What one read returned: slices viewing the log's batches, valid until the log
// changes, and each batch's owner, which keeps a slice valid past that (a Fetch
// response written after retention or a deletion dropped the batch).
struct LogSlice {
  std::vector<std::string_view> batches;
  std::vector<SharedBuffer> owners;  // parallel to `batches`
  size_t bytes = 0;
  int64_t next_offset =
      -1;  // offset after the last returned batch (-1 if none)
};

class PartitionLog {
 public:
  // What a clean (log/compaction.h) does to one batch: `bytes` replace it at
  // the same offsets, or nullopt removes it.
  struct BatchRewrite {
    size_t index = 0;  // into batches()
    std::optional<std::string> bytes;
  };

  PartitionLog() = default;
  PartitionLog(const PartitionLog&) = delete;
  PartitionLog& operator=(const PartitionLog&) = delete;

  int64_t log_start_offset() const { return log_start_offset_; }
  int64_t log_end_offset() const { return log_end_offset_; }
  int64_t high_watermark() const { return high_watermark_; }
  // The end of what the broker's store holds (<= LEO): what a follower may
  // copy. A partition without followers makes it visible at once (the high
  // watermark follows it); a leader's high watermark waits for its in-sync
  // followers as well (replication/).
  int64_t durable_end_offset() const { return durable_end_offset_; }
  void MarkDurable(int64_t offset) {
    durable_end_offset_ =
        std::max(durable_end_offset_, std::min(offset, log_end_offset_));
  }
  size_t size_in_bytes() const { return size_in_bytes_; }
  size_t batch_count() const { return batches_.size(); }
  const std::deque<StoredBatch>& batches() const { return batches_; }

  // Appends a validated batch at the log end without copying it: the log keeps
  // `owner` alive and writes the base offset and leader epoch into `data`
  // itself.
  StoredBatch& Append(SharedBuffer owner, char* data, size_t size,
                      const protocol::RecordBatchHeader& header,
                      int32_t leader_epoch);

  // A compacted leader's log has gaps: the next batch a follower copies may
  // start past this log's end, which then moves up to it.
  void SkipTo(int64_t offset) {
    log_end_offset_ = std::max(log_end_offset_, offset);
  }

  // Applies a clean's rewrites, in index order. Offsets do not move: the log
  // start and end and the high watermark stay; removed batches leave gaps.
  void Rewrite(std::vector<BatchRewrite> rewrites);

  // Copies every batch whose bytes lie in `plan`'s chunks into a buffer of its
  // own, so that the chunks can be released. Returns the bytes copied.
  size_t CopyOut(const FrameEvacuation& plan);

  // Restores a batch read back from the store at the offset it already carries.
  void Restore(std::string_view bytes,
               const protocol::RecordBatchHeader& header);

  // Makes everything below `offset` (at most the LEO) visible.
  void AdvanceHighWatermark(int64_t offset);

  // Reads whole batches holding offsets in [offset, limit): the batch
  // containing `offset` first. Stops before a batch that would take the total
  // over `max_bytes`, except that the first batch is returned whatever its size
  // when `first_batch_always` (KIP-74: a consumer must be able to make progress
  // past a batch larger than its fetch size).
  LogSlice Read(int64_t offset, int64_t limit, size_t max_bytes,
                bool first_batch_always) const;

  // The offset of the first record whose timestamp is >= `timestamp`, and that
  // timestamp; nullopt if every record is older. Searches records below the
  // HWM.
  struct TimestampOffset {
    int64_t offset;
    int64_t timestamp;
  };
  std::optional<TimestampOffset> OffsetForTimestamp(int64_t timestamp) const;

  // Removes whole batches that lie entirely below `offset` and moves the log
  // start to `offset` (DeleteRecords may move it into the middle of a batch;
  // reads then start there). Returns the base offsets of the batches removed.
  std::vector<int64_t> DeleteBefore(int64_t offset);

  // Removes the batches at the end of the log that hold `offset` or anything
  // after it (a replica following a new leader drops what that leader does
  // not have): the log then ends at `offset`, or earlier when `offset` falls
  // inside a batch, as Kafka truncates whole batches. The high watermark and
  // durable end come down with it. Returns the batches removed, oldest first.
  std::vector<StoredBatch> TruncateTo(int64_t offset);

  // Oldest batches that can go for size-based retention without crossing
  // `limit`, keeping at most `retain_bytes`. Returns the new log start offset
  // (unchanged when nothing goes).
  int64_t RetentionStartOffset(int64_t retain_bytes, int64_t limit) const;

  // Sets the start offset restored from the store (after DeleteRecords or
  // retention).
  void RestoreLogStartOffset(int64_t offset);
  // An empty log starts (and ends) at `offset` from now on, below or above
  // where it was: a follower starting over at its leader's log (see
  // replication/log_truncation.h). Does nothing to a log that holds batches.
  void StartEmptyAt(int64_t offset);

 private:
  // Index of the first batch whose last offset is >= offset (batches_.size() if
  // none).
  size_t FindBatch(int64_t offset) const;

  std::deque<StoredBatch> batches_;
  int64_t log_start_offset_ = 0;
  int64_t log_end_offset_ = 0;
  int64_t high_watermark_ = 0;
  int64_t durable_end_offset_ = 0;
  size_t size_in_bytes_ = 0;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_LOG_PARTITION_LOG_H_
