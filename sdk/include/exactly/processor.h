// The exactly-once consume-transform-produce loop. Each batch of input
// records is transformed into output records, and the outputs plus the
// inputs' offsets (with the consumer's group metadata, so that a zombie
// instance is fenced) are committed in one transaction: every input record
// affects the committed output exactly once, across crashes and rebalances.
//
//   exactly::ProcessorOptions opts;
//   opts.bootstrap_servers = "localhost:9092";
//   opts.group_id = "enricher";
//   opts.input_topics = {"orders"};
//   opts.transactional_id = "enricher-1";
//   auto p = exactly::Processor::Create(opts,
//       [](const exactly::Message& in, exactly::Emitter& out) {
//         return out.Send({.topic = "enriched", .key = in.key(),
//                          .value = Enrich(in.value())});
//       });
//   absl::Status s = (*p)->Run();   // until Stop() or an error
#ifndef EXACTLY_PROCESSOR_H_
#define EXACTLY_PROCESSOR_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/message.h"
#include "exactly/options.h"
#include "exactly/record.h"

namespace exactly {

// Where a transform sends its output: into the batch's transaction.
class Emitter {
 public:
  virtual ~Emitter() = default;
  virtual absl::Status Send(const Record& record) = 0;
};

// Turns one input record into zero or more output records. It may run more
// than once for an input (after an abort, a batch is transformed again);
// only one run's output is ever committed, so keep it free of other side
// effects. An error it returns (or an exception it throws) stops the
// processor with that error; the input stays uncommitted.
using Transform =
    std::function<absl::Status(const Message& input, Emitter& output)>;

// The upper bounds of ProcessorStats::batch_size_counts' buckets (input
// records per committed batch).
inline constexpr std::array<uint64_t, 12> kBatchSizeBounds = {
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};

// Why the processor aborted a batch's transaction
// (ProcessorStats::aborted_by_cause).
enum class ProcessorAbortCause {
  kError,           // the transform's own error (or exception), or an error
                    // that is not retried: processing stops with it
  kAbortableError,  // an abortable (or retriable) Kafka error: the batch is
                    // transformed again
  kRevoked,         // partitions the batch read were revoked (or lost)
  kClose,           // Close() with a batch open
};
inline constexpr size_t kProcessorAbortCauseCount = 4;
// Their names, indexed by the enum: the "cause" label in Prometheus.
inline constexpr std::array<std::string_view, kProcessorAbortCauseCount>
    kProcessorAbortCauseNames = {"error", "abortable_error", "revoked",
                                 "close"};

struct ProcessorStats {
  uint64_t records_in = 0;   // input records whose offsets were committed
  uint64_t records_out = 0;  // output records committed
  uint64_t transactions_committed = 0;
  uint64_t transactions_aborted = 0;
  uint64_t batches_replayed = 0;  // batches transformed again after an abort
  // transactions_aborted by ProcessorAbortCause (indexed by the enum; they
  // add up to transactions_aborted).
  std::array<uint64_t, kProcessorAbortCauseCount> aborted_by_cause{};
  // Input records per committed batch: batch_size_counts[i] batches had more
  // than kBatchSizeBounds[i - 1] and at most kBatchSizeBounds[i]; the last
  // element, more than every bound. Their sum is records_in.
  std::array<uint64_t, kBatchSizeBounds.size() + 1> batch_size_counts{};
  // Rebalance events: partitions assigned to this member, and revoked from
  // it (or lost), each callback with at least one partition counted once.
  uint64_t partitions_assigned = 0;
  uint64_t partitions_revoked = 0;
  // The next offset to read, per input partition, as last committed here.
  std::vector<TopicPartitionOffset> committed_offsets;
};

class Processor {
 public:
  static absl::StatusOr<std::unique_ptr<Processor>> Create(
      const ProcessorOptions& options, Transform transform);
  ~Processor();  // Close()

  // Processes batches until Stop() (then returns OK, the last batch
  // committed) or until an error ends processing.
  absl::Status Run();
  // One batch: waits up to max_batch_time for a first record, collects until
  // the batch is full or its time is up, and commits it. OK if none came.
  absl::Status RunOnce();
  // Makes Run() return after committing the current batch. Any thread.
  void Stop();

  ProcessorStats stats() const;

  // Leaves the group (an open batch is aborted) and closes both clients.
  absl::Status Close();

 private:
  class Impl;
  explicit Processor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exactly

#endif  // EXACTLY_PROCESSOR_H_
