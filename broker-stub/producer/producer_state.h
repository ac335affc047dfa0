// Per partition, per producer id: the epoch and the last five batches the
// broker appended for it. This is what makes retries idempotent: a batch the
// broker already has is recognised by its sequence numbers and acknowledged
// with its original offset instead of being appended twice. The rules follow
// Kafka's ProducerStateManager (see docs/architecture.md).
#ifndef EXACTLY_BROKER_PRODUCER_PRODUCER_STATE_H_
#define EXACTLY_BROKER_PRODUCER_PRODUCER_STATE_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "protocol/error_code.h"
#include "protocol/record_batch.h"

namespace exactly::broker {

// How many recent batches a producer entry remembers (Kafka: 5, librdkafka's
// max in-flight).
inline constexpr size_t kProducerBatchWindow = 5;

struct ProducerBatch {
  int32_t first_sequence = 0;
  int32_t last_sequence = 0;
  int64_t first_offset = 0;
  int32_t offset_delta = 0;
  int64_t max_timestamp = 0;
  bool operator==(const ProducerBatch&) const = default;
};

struct ProducerEntry {
  int16_t epoch = protocol::kNoProducerEpoch;
  std::deque<ProducerBatch>
      batches;                     // oldest first, at most kProducerBatchWindow
  int32_t coordinator_epoch = -1;  // of the last marker written for it
  // Where its last transaction marker is: a transactional batch below it
  // belongs to a transaction that has already ended.
  int64_t last_marker_offset = -1;
  bool operator==(const ProducerEntry&) const = default;

  // The sequence the next batch must start with: last + 1 (wrapping), or 0
  // after an epoch change; nullopt when nothing is known.
  int32_t last_sequence() const {
    return batches.empty() ? protocol::kNoSequence
                           : batches.back().last_sequence;
  }
};

// The verdict on one incoming batch.
struct SequenceCheck {
  enum class Verdict { kAppend, kDuplicate, kReject };
  Verdict verdict = Verdict::kAppend;
  protocol::ErrorCode error = protocol::ErrorCode::kNone;  // for kReject
  std::string message;                                     // for kReject
  std::optional<ProducerBatch> duplicate_of;               // for kDuplicate
  // For kDuplicate: the batch it repeats is in a transaction that already
  // ended (committed or aborted), so this cannot be a retry of it; the client
  // is reusing sequence numbers for new records (librdkafka after an abort
  // that purged records the broker had).
  bool transaction_ended = false;
};

class ProducerStateTable {
 public:
  // Applies the dedup rules to a batch with a producer id (others always
  // append).
  SequenceCheck Check(const protocol::RecordBatchHeader& batch) const;

  // Records a batch appended at its (broker-assigned) base offset.
  void OnAppend(const protocol::RecordBatchHeader& appended);

  // Records a transaction marker at `marker_offset`; a marker with a newer
  // epoch (written when the coordinator fences a producer) moves the producer
  // to that epoch and forgets its old batches.
  void OnMarker(int64_t producer_id, int16_t epoch, int32_t coordinator_epoch,
                int64_t marker_offset);

  const ProducerEntry* Find(int64_t producer_id) const;
  const std::unordered_map<int64_t, ProducerEntry>& entries() const {
    return entries_;
  }
  void Restore(int64_t producer_id, ProducerEntry entry);
  void Erase(int64_t producer_id) { entries_.erase(producer_id); }

  // The durable form of an entry (for the broker's store).
  static std::string Serialize(const ProducerEntry& entry);
  static absl::StatusOr<ProducerEntry> Deserialize(std::string_view bytes);

 private:
  std::unordered_map<int64_t, ProducerEntry> entries_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_PRODUCER_PRODUCER_STATE_H_
