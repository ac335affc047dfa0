#include "producer/producer_state.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "protocol/serde.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::RecordBatchHeader;

// Whether `next` directly follows `last`; sequences wrap to 0 after INT32_MAX.
bool InSequence(int32_t last, int32_t next) {
  if (last == std::numeric_limits<int32_t>::max()) return next == 0;
  return static_cast<int64_t>(next) == static_cast<int64_t>(last) + 1;
}

SequenceCheck Reject(ErrorCode code, std::string message) {
  SequenceCheck c;
  c.verdict = SequenceCheck::Verdict::kReject;
  c.error = code;
  c.message = std::move(message);
  return c;
}

}  // namespace

SequenceCheck ProducerStateTable::Check(const RecordBatchHeader& batch) const {
  if (!batch.has_producer_id()) return {};
  auto it = entries_.find(batch.producer_id);
  if (it == entries_.end()) {
    // Nothing known (a new producer, or its state aged out): any sequence
    // starts it.
    return {};
  }
  const ProducerEntry& entry = it->second;
  if (batch.producer_epoch < entry.epoch) {
    return Reject(
        ErrorCode::kInvalidProducerEpoch,
        absl::StrCat("producer ", batch.producer_id, " epoch ",
                     batch.producer_epoch, " is older than the current epoch ",
                     entry.epoch));
  }
  if (batch.producer_epoch > entry.epoch) {
    if (batch.base_sequence != 0) {
      return Reject(
          ErrorCode::kOutOfOrderSequenceNumber,
          absl::StrCat("producer ", batch.producer_id, " new epoch ",
                       batch.producer_epoch, " must start at sequence 0, not ",
                       batch.base_sequence));
    }
    return {};
  }
  for (const ProducerBatch& b : entry.batches) {
    if (b.first_sequence == batch.base_sequence &&
        b.last_sequence == batch.last_sequence()) {
      SequenceCheck c;
      c.verdict = SequenceCheck::Verdict::kDuplicate;
      c.duplicate_of = b;
      c.transaction_ended =
          batch.is_transactional() && b.first_offset < entry.last_marker_offset;
      return c;
    }
  }
  int32_t last = entry.last_sequence();
  if (!InSequence(last, batch.base_sequence)) {
    return Reject(
        ErrorCode::kOutOfOrderSequenceNumber,
        absl::StrCat("producer ", batch.producer_id, " epoch ",
                     batch.producer_epoch, ": expected sequence ",
                     last == protocol::kNoSequence
                         ? 0
                         : RecordBatchHeader::IncrementSequence(last, 1),
                     ", got ", batch.base_sequence));
  }
  return {};
}

void ProducerStateTable::OnAppend(const RecordBatchHeader& appended) {
  if (!appended.has_producer_id()) return;
  ProducerEntry& entry = entries_[appended.producer_id];
  if (appended.producer_epoch != entry.epoch) {
    entry.epoch = appended.producer_epoch;
    entry.batches.clear();
  }
  entry.batches.push_back({appended.base_sequence, appended.last_sequence(),
                           appended.base_offset, appended.last_offset_delta,
                           appended.max_timestamp});
  while (entry.batches.size() > kProducerBatchWindow) entry.batches.pop_front();
}

void ProducerStateTable::OnMarker(int64_t producer_id, int16_t epoch,
                                  int32_t coordinator_epoch,
                                  int64_t marker_offset) {
  ProducerEntry& entry = entries_[producer_id];
  if (epoch > entry.epoch) {
    entry.epoch = epoch;
    entry.batches.clear();
  }
  entry.coordinator_epoch = coordinator_epoch;
  entry.last_marker_offset = marker_offset;
}

const ProducerEntry* ProducerStateTable::Find(int64_t producer_id) const {
  auto it = entries_.find(producer_id);
  return it == entries_.end() ? nullptr : &it->second;
}

void ProducerStateTable::Restore(int64_t producer_id, ProducerEntry entry) {
  entries_[producer_id] = std::move(entry);
}

std::string ProducerStateTable::Serialize(const ProducerEntry& entry) {
  std::string out;
  protocol::Encoder e(&out, 0, false);
  e.Int8(1);  // format version; 1 added last_marker_offset
  e.Int16(entry.epoch);
  e.Int32(entry.coordinator_epoch);
  e.Int64(entry.last_marker_offset);
  e.Int32(static_cast<int32_t>(entry.batches.size()));
  for (const ProducerBatch& b : entry.batches) {
    e.Int32(b.first_sequence);
    e.Int32(b.last_sequence);
    e.Int64(b.first_offset);
    e.Int32(b.offset_delta);
    e.Int64(b.max_timestamp);
  }
  return out;
}

absl::StatusOr<ProducerEntry> ProducerStateTable::Deserialize(
    std::string_view bytes) {
  protocol::Decoder d(bytes, 0, false);
  ProducerEntry entry;
  int8_t format = 0;
  int32_t count = 0;
  d.Int8(format);
  d.Int16(entry.epoch);
  d.Int32(entry.coordinator_epoch);
  if (format >= 1) d.Int64(entry.last_marker_offset);
  d.Int32(count);
  if (d.ok() && (format < 0 || format > 1 || count < 0 ||
                 count > static_cast<int32_t>(kProducerBatchWindow))) {
    return absl::DataLossError(
        absl::StrCat("producer state: bad format ", format, "/", count));
  }
  for (int32_t i = 0; i < count && d.ok(); ++i) {
    ProducerBatch& b = entry.batches.emplace_back();
    d.Int32(b.first_sequence);
    d.Int32(b.last_sequence);
    d.Int64(b.first_offset);
    d.Int32(b.offset_delta);
    d.Int64(b.max_timestamp);
  }
  if (!d.ok()) return absl::DataLossError(d.status().message());
  return entry;
}

}  // namespace exactly::broker
