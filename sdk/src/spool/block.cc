#include "spool/block.h"

#include <optional>

#include "spool/format.h"

namespace exactly::internal::spool {
namespace {

constexpr uint8_t kBlockVersion = 1;
constexpr size_t kHeaderSize = 9;  // version + first_seq
constexpr size_t kLengthSize = 4;
// The smallest stored record: CRC (4) + version (1) + append_ms (8) +
// timestamp (8) + partition (4) + five one-byte varints.
constexpr size_t kMinRecordSize = 30;
// After damage, how many sequences on the next provable record may be: a
// wider window costs a CRC extension per position and sequence.
constexpr uint64_t kResyncWindow = 16;

// The record whose length field is at `pos`, if it fits in the value.
std::optional<std::string_view> RecordAt(std::string_view value, size_t pos) {
  if (value.size() - pos < kLengthSize) return std::nullopt;
  const uint32_t n = LoadFixed32(value.data() + pos);
  if (n < kMinRecordSize || n > value.size() - pos - kLengthSize) {
    return std::nullopt;
  }
  return value.substr(pos + kLengthSize, n);
}

// How many records there are, if the length fields tile the value exactly.
std::optional<uint64_t> TiledCount(std::string_view value) {
  uint64_t count = 0;
  size_t pos = kHeaderSize;
  while (pos < value.size()) {
    std::optional<std::string_view> record = RecordAt(value, pos);
    if (!record.has_value()) return std::nullopt;
    ++count;
    pos += kLengthSize + record->size();
  }
  return count;
}

struct Found {
  size_t pos;
  uint64_t seq;
};

// The first position from `pos` on that holds a record whose CRC proves it
// is one of the sequences [lo, hi].
std::optional<Found> Resync(std::string_view value, size_t pos, uint64_t lo,
                            uint64_t hi) {
  for (; pos + kLengthSize + kMinRecordSize <= value.size(); ++pos) {
    std::optional<std::string_view> record = RecordAt(value, pos);
    if (!record.has_value()) continue;
    if (std::optional<uint64_t> seq = MatchingSeq(*record, lo, hi)) {
      return Found{pos, *seq};
    }
  }
  return std::nullopt;
}

uint64_t HeaderFirstSeq(std::string_view value) {
  return DecodeU64(value.substr(1, 8)).value_or(0);
}

}  // namespace

BlockBuilder::BlockBuilder() { value_.append(kHeaderSize, '\0'); }

void BlockBuilder::Add(const Record& record, int64_t append_ms,
                       std::string_view cursor) {
  const size_t at = value_.size();
  value_.append(kLengthSize, '\0');
  payload_crcs_.push_back(AppendRecord(value_, record, append_ms, cursor));
  const size_t stored = value_.size() - at - kLengthSize;
  StoreFixed32(value_.data() + at, static_cast<uint32_t>(stored));
  record_bytes_ += stored;
}

std::string_view BlockBuilder::Seal(uint64_t first_seq) {
  value_[0] = static_cast<char>(kBlockVersion);
  const std::string be = EncodeU64(first_seq);
  value_.replace(1, 8, be);
  size_t pos = kHeaderSize;
  for (size_t i = 0; i < payload_crcs_.size(); ++i) {
    const uint32_t n = LoadFixed32(value_.data() + pos);
    SealAt(value_.data() + pos + kLengthSize, payload_crcs_[i], first_seq + i);
    pos += kLengthSize + n;
  }
  return value_;
}

std::string BlockOfStored(uint64_t seq, std::string_view stored) {
  std::string value(kHeaderSize + kLengthSize, '\0');
  value[0] = static_cast<char>(kBlockVersion);
  value.replace(1, 8, EncodeU64(seq));
  StoreFixed32(value.data() + kHeaderSize,
               static_cast<uint32_t>(stored.size()));
  value.append(stored.data(), stored.size());
  return value;
}

bool ForEachInBlock(std::string_view value, uint64_t last_seq, uint64_t from,
                    const std::function<bool(uint64_t, std::string_view)>& fn) {
  // The usual case: the lengths tile the value and agree with the key.
  if (std::optional<uint64_t> count = TiledCount(value);
      count.has_value() && *count > 0 && *count <= last_seq) {
    uint64_t seq = last_seq - (*count - 1);
    for (size_t pos = kHeaderSize; pos < value.size(); ++seq) {
      const std::string_view record = *RecordAt(value, pos);
      pos += kLengthSize + record.size();
      if (seq >= from && !fn(seq, record)) return false;
    }
    return true;
  }
  // Damaged structure: walk from the header's first sequence, proving each
  // record by its CRC. A header too damaged to give a plausible first
  // sequence leaves nothing provable.
  if (value.size() < kHeaderSize) return true;
  uint64_t seq = HeaderFirstSeq(value);
  if (seq == 0 || seq > last_seq ||
      last_seq - seq > value.size() / (kLengthSize + kMinRecordSize)) {
    return true;
  }
  size_t pos = kHeaderSize;
  while (seq <= last_seq && pos < value.size()) {
    std::optional<std::string_view> record = RecordAt(value, pos);
    if (record.has_value() && CheckRecord(*record, seq)) {
      if (seq >= from && !fn(seq, *record)) return false;
      pos += kLengthSize + record->size();
      ++seq;
      continue;
    }
    // The record here does not prove itself: find the next one that does.
    const uint64_t hi =
        seq + kResyncWindow > last_seq ? last_seq : seq + kResyncWindow;
    std::optional<Found> next =
        seq < last_seq ? Resync(value, pos + 1, seq + 1, hi) : std::nullopt;
    // Its length was right if the next record starts where it said: pass
    // the damaged record on, so that it is quarantined with its bytes.
    const bool in_place =
        record.has_value() &&
        (next.has_value()
             ? next->seq == seq + 1 &&
                   next->pos == pos + kLengthSize + record->size()
             : seq == last_seq &&
                   pos + kLengthSize + record->size() == value.size());
    if (in_place && seq >= from && !fn(seq, *record)) return false;
    if (!next.has_value()) return true;  // the rest is left out
    pos = next->pos;
    seq = next->seq;
  }
  return true;
}

}  // namespace exactly::internal::spool
