// The spool's stored bytes: the first 8 input bytes are a sequence
// (big-endian), the rest a stored value, read as a record (DecodeRecord,
// CheckRecord, MatchingSeq), as a block stored under that sequence as its last
// (ForEachInBlock, each record in it decoded), and as a quarantine entry.
// A record that decodes must re-encode, sealed under the sequence, to one that
// decodes to the same fields and passes its CRC check; and a block of one
// stored record must give back exactly that record.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "spool/block.h"
#include "spool/format.h"

namespace exactly::internal::spool {
namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

// Equal, null (data() == nullptr) included.
bool SameNullable(std::string_view a, std::string_view b) {
  return (a.data() == nullptr) == (b.data() == nullptr) && a == b;
}

void CheckSame(const DecodedRecord& a, const DecodedRecord& b) {
  Check(a.append_ms == b.append_ms && a.topic == b.topic &&
        SameNullable(a.key, b.key) && SameNullable(a.value, b.value) &&
        a.partition == b.partition && a.timestamp_ms == b.timestamp_ms &&
        a.cursor == b.cursor && a.headers.size() == b.headers.size());
  for (size_t i = 0; i < a.headers.size(); ++i) {
    Check(a.headers[i].key == b.headers[i].key &&
          SameNullable(a.headers[i].value, b.headers[i].value));
  }
}

void CheckRecordValue(std::string_view stored, uint64_t seq) {
  const bool sealed = CheckRecord(stored, seq);
  // A window of 16 after seq, short of wrapping around.
  const uint64_t last = seq > UINT64_MAX - 16 ? UINT64_MAX : seq + 16;
  std::optional<uint64_t> match = MatchingSeq(stored, seq, last);
  Check(!sealed || match == seq);
  absl::StatusOr<DecodedRecord> decoded = DecodeRecord(stored);
  if (!decoded.ok()) return;
  EncodedRecord encoded =
      EncodeRecord(decoded->AsRecord(), decoded->append_ms, decoded->cursor);
  Seal(encoded, seq);
  Check(CheckRecord(encoded.stored, seq));
  absl::StatusOr<DecodedRecord> again = DecodeRecord(encoded.stored);
  Check(again.ok());
  CheckSame(*decoded, *again);

  if (seq == 0) return;  // sequences start at 1
  const std::string block = BlockOfStored(seq, stored);
  int seen = 0;
  ForEachInBlock(block, seq, 0, [&](uint64_t s, std::string_view r) {
    Check(s == seq && r == stored);
    ++seen;
    return true;
  });
  Check(seen == 1);
}

void CheckBlockValue(std::string_view value, uint64_t last_seq) {
  uint64_t previous = 0;
  ForEachInBlock(value, last_seq, 0, [&](uint64_t seq, std::string_view r) {
    Check(seq > previous && seq <= last_seq);
    previous = seq;
    (void)CheckRecord(r, seq);
    (void)DecodeRecord(r);
    return true;
  });
}

}  // namespace
}  // namespace exactly::internal::spool

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace exactly::internal::spool;
  if (size < 8) return 0;
  uint64_t seq = 0;
  for (int i = 0; i < 8; ++i) seq = (seq << 8) | data[i];
  std::string_view value(reinterpret_cast<const char*>(data) + 8, size - 8);
  CheckRecordValue(value, seq);
  CheckBlockValue(value, seq);
  (void)DecodeQuarantine(value);
  return 0;
}
