#include "spool/format.h"

#include <cstring>

#include "absl/status/status.h"
#include "crc32c/crc32c.h"

namespace exactly::internal::spool {
namespace {

constexpr uint8_t kRecordVersion = 1;
constexpr uint8_t kQuarantineVersion = 1;

// Little-endian; on a little-endian host a plain copy (this runs for every
// field of every record a Send spools).
template <typename T>
void PutFixed(std::string& out, T v) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  if constexpr (sizeof(T) == 8) {
    v = __builtin_bswap64(v);
  } else {
    v = __builtin_bswap32(v);
  }
#endif
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

void PutFixed64(std::string& out, uint64_t v) { PutFixed(out, v); }
void PutFixed32(std::string& out, uint32_t v) { PutFixed(out, v); }

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutBytes(std::string& out, std::string_view bytes) {
  PutVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

// Length + 1, so that 0 stands for null.
void PutNullableBytes(std::string& out, std::string_view bytes) {
  if (bytes.data() == nullptr) {
    PutVarint(out, 0);
    return;
  }
  PutVarint(out, bytes.size() + 1);
  out.append(bytes.data(), bytes.size());
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool Fixed64(uint64_t& v) {
    if (in_.size() < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    }
    in_.remove_prefix(8);
    return true;
  }
  bool Fixed32(uint32_t& v) {
    if (in_.size() < 4) return false;
    v = LoadFixed32(in_.data());
    in_.remove_prefix(4);
    return true;
  }
  bool Byte(uint8_t& v) {
    if (in_.empty()) return false;
    v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (in_.empty()) return false;
      const uint8_t b = static_cast<uint8_t>(in_[0]);
      in_.remove_prefix(1);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Bytes(std::string_view& out) {
    uint64_t n = 0;
    if (!Varint(n) || n > in_.size()) return false;
    out = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  bool NullableBytes(std::string_view& out) {
    uint64_t n = 0;
    if (!Varint(n)) return false;
    if (n == 0) {
      out = std::string_view();
      return true;
    }
    --n;
    if (n > in_.size()) return false;
    // A non-null empty view must not have a null data().
    out = std::string_view(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool empty() const { return in_.empty(); }
  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

uint32_t SeqCrc(uint32_t payload_crc, uint64_t seq) {
  char be[8];
  for (int i = 0; i < 8; ++i) be[7 - i] = static_cast<char>(seq >> (8 * i));
  return crc32c::Extend(payload_crc, be, sizeof be);
}

}  // namespace

std::string EncodeU64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[7 - i] = static_cast<char>(v >> (8 * i));
  return out;
}

void StoreFixed32(char* at, uint32_t v) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  std::memcpy(at, &v, sizeof v);
}

uint32_t LoadFixed32(const char* at) {
  uint32_t v;
  std::memcpy(&v, at, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

std::optional<uint64_t> DecodeU64(std::string_view bytes) {
  if (bytes.size() != 8) return std::nullopt;
  uint64_t v = 0;
  for (char c : bytes) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

std::string SeqKey(char prefix, uint64_t seq) {
  std::string key(1, prefix);
  key += EncodeU64(seq);
  return key;
}

std::optional<uint64_t> ParseSeqKey(char prefix, std::string_view key) {
  if (key.size() != kSeqKeySize || key[0] != prefix) return std::nullopt;
  return DecodeU64(key.substr(1));
}

size_t EncodedSizeBound(const Record& record, std::string_view cursor) {
  size_t size = 44 + record.topic.size() + record.key.size() +
                record.value.size() + cursor.size();
  for (const Header& h : record.headers) {
    size += 10 + h.key.size() + h.value.size();
  }
  return size;
}

uint32_t AppendRecord(std::string& p, const Record& record, int64_t append_ms,
                      std::string_view cursor) {
  p.append(4, '\0');  // the CRC, filled in by Seal()
  const size_t payload = p.size();
  p.push_back(static_cast<char>(kRecordVersion));
  PutFixed64(p, static_cast<uint64_t>(append_ms));
  PutFixed64(p, static_cast<uint64_t>(record.timestamp_ms));
  PutFixed32(p, static_cast<uint32_t>(record.partition));
  PutBytes(p, record.topic);
  PutNullableBytes(p, record.key);
  PutNullableBytes(p, record.value);
  PutVarint(p, record.headers.size());
  for (const Header& h : record.headers) {
    PutBytes(p, h.key);
    PutNullableBytes(p, h.value);
  }
  PutBytes(p, cursor);
  return crc32c::Extend(0, p.data() + payload, p.size() - payload);
}

EncodedRecord EncodeRecord(const Record& record, int64_t append_ms,
                           std::string_view cursor) {
  EncodedRecord out;
  out.stored.reserve(EncodedSizeBound(record, cursor));
  out.payload_crc = AppendRecord(out.stored, record, append_ms, cursor);
  return out;
}

void SealAt(char* crc_slot, uint32_t payload_crc, uint64_t seq) {
  StoreFixed32(crc_slot, SeqCrc(payload_crc, seq));
}

void Seal(EncodedRecord& encoded, uint64_t seq) {
  SealAt(encoded.stored.data(), encoded.payload_crc, seq);
}

bool CheckRecord(std::string_view stored, uint64_t seq) {
  Reader r(stored);
  uint32_t crc = 0;
  if (!r.Fixed32(crc)) return false;
  return SeqCrc(crc32c::Value(r.rest()), seq) == crc;
}

std::optional<uint64_t> MatchingSeq(std::string_view stored, uint64_t lo,
                                    uint64_t hi) {
  Reader r(stored);
  uint32_t crc = 0;
  if (!r.Fixed32(crc)) return std::nullopt;
  const uint32_t payload_crc = crc32c::Value(r.rest());
  for (uint64_t seq = lo; seq <= hi && seq >= lo; ++seq) {
    if (SeqCrc(payload_crc, seq) == crc) return seq;
  }
  return std::nullopt;
}

absl::StatusOr<DecodedRecord> DecodeRecord(std::string_view stored) {
  Reader r(stored);
  DecodedRecord out;
  uint32_t crc = 0;
  uint8_t version = 0;
  uint64_t append = 0, timestamp = 0, count = 0;
  uint32_t partition = 0;
  if (!r.Fixed32(crc) || !r.Byte(version)) {
    return absl::DataLossError("spool record: truncated header");
  }
  if (version != kRecordVersion) {
    return absl::DataLossError("spool record: unknown format version " +
                               std::to_string(version));
  }
  if (!r.Fixed64(append) || !r.Fixed64(timestamp) || !r.Fixed32(partition) ||
      !r.Bytes(out.topic) || !r.NullableBytes(out.key) ||
      !r.NullableBytes(out.value) || !r.Varint(count) ||
      count > stored.size()) {
    return absl::DataLossError("spool record: truncated or malformed");
  }
  out.append_ms = static_cast<int64_t>(append);
  out.timestamp_ms = static_cast<int64_t>(timestamp);
  out.partition = static_cast<int32_t>(partition);
  out.headers.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    Header h;
    if (!r.Bytes(h.key) || !r.NullableBytes(h.value)) {
      return absl::DataLossError("spool record: malformed header");
    }
    out.headers.push_back(h);
  }
  if (!r.Bytes(out.cursor) || !r.empty()) {
    return absl::DataLossError("spool record: malformed trailer");
  }
  return out;
}

std::string EncodeQuarantine(const QuarantineEntry& entry) {
  std::string out;
  out.push_back(static_cast<char>(kQuarantineVersion));
  PutFixed64(out, entry.seq);
  PutFixed64(out, entry.records);
  PutFixed64(out, static_cast<uint64_t>(entry.quarantined_ms));
  PutBytes(out, entry.reason);
  PutBytes(out, entry.bytes);
  return out;
}

absl::StatusOr<QuarantineEntry> DecodeQuarantine(std::string_view value) {
  Reader r(value);
  QuarantineEntry out;
  uint8_t version = 0;
  uint64_t when = 0;
  std::string_view reason, bytes;
  if (!r.Byte(version) || version != kQuarantineVersion ||
      !r.Fixed64(out.seq) || !r.Fixed64(out.records) || !r.Fixed64(when) ||
      !r.Bytes(reason) || !r.Bytes(bytes)) {
    return absl::DataLossError("malformed quarantine entry");
  }
  out.quarantined_ms = static_cast<int64_t>(when);
  out.reason = std::string(reason);
  out.bytes = std::string(bytes);
  return out;
}

}  // namespace exactly::internal::spool
