// The spool's on-disk format: RocksDB keys and the encoding of one record.
//
// Keys (one RocksDB database per spool directory, default column family):
//   'b' + seq (8 bytes, big-endian)   a block of records, keyed by its last
//                                     sequence (block.h)
//   'r' + seq (8 bytes, big-endian)   format 1 only: one record per key
//                                     (converted to blocks on opening)
//   'q' + id  (8 bytes, big-endian)   a quarantined record (see Quarantine)
//   "m:..."                           metadata (format, spool id, sequence
//                                     high-water mark, cursor, committed)
//
// A record (stored in a block):
//   crc32c      4 bytes LE   CRC-32C of payload || seq (8 bytes BE), so that
//                            a record read under another key fails the check
//   payload:
//     version        1 byte (1)
//     append_ms      8 bytes LE  wall clock when Send() accepted it
//     timestamp_ms   8 bytes LE  the Kafka record timestamp
//     partition      4 bytes LE  (-1: partitioner)
//     topic          varint length, bytes
//     key            varint (length + 1; 0 = null), bytes
//     value          varint (length + 1; 0 = null), bytes
//     header count   varint; per header: key (varint length, bytes),
//                    value (varint length + 1; 0 = null, bytes)
//     cursor         varint length, bytes (the application's cursor; may be
//                    empty)
#ifndef EXACTLY_SDK_SRC_SPOOL_FORMAT_H_
#define EXACTLY_SDK_SRC_SPOOL_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "exactly/record.h"

namespace exactly::internal::spool {

inline constexpr char kRecordPrefix = 'r';
inline constexpr char kQuarantinePrefix = 'q';
inline constexpr size_t kSeqKeySize = 9;  // prefix + 8 bytes

// Metadata keys.
inline constexpr char kFormatKey[] = "m:format";
inline constexpr char kFormatValue[] = "exactly-spool 2";
inline constexpr char kFormatValueOneKeyPerRecord[] = "exactly-spool 1";
inline constexpr char kSpoolIdKey[] = "m:spool_id";
// The next sequence to hand out (8 bytes BE): never decreases, so that a
// sequence is never used twice, even after every record was deleted.
inline constexpr char kNextSeqKey[] = "m:next_seq";
// The last sequence known to be committed in Kafka (8 bytes BE; 0: none),
// written with the deletes that follow a commit.
inline constexpr char kCommittedKey[] = "m:committed";
// The last sequence handed to the producer (at-least-once mode; 8 bytes BE).
inline constexpr char kSentKey[] = "m:sent";
// The cursor of the last spooled record that had one: seq (8 bytes BE) +
// cursor bytes.
inline constexpr char kCursorKey[] = "m:cursor";
// The next quarantine id (8 bytes BE).
inline constexpr char kNextQuarantineKey[] = "m:next_quarantine";

std::string SeqKey(char prefix, uint64_t seq);
// The sequence in a key of `prefix`, or nullopt if the key is not one.
std::optional<uint64_t> ParseSeqKey(char prefix, std::string_view key);

std::string EncodeU64(uint64_t v);  // 8 bytes BE
// 4 bytes little-endian at `at` (CRCs and lengths in stored values).
void StoreFixed32(char* at, uint32_t v);
uint32_t LoadFixed32(const char* at);
std::optional<uint64_t> DecodeU64(std::string_view bytes);

// A record as it will be stored, its CRC not yet filled in (4 zero bytes,
// then the payload), and the CRC of the payload alone; Seal() binds it to its
// sequence.
struct EncodedRecord {
  std::string stored;
  uint32_t payload_crc = 0;
};
EncodedRecord EncodeRecord(const Record& record, int64_t append_ms,
                           std::string_view cursor);
// The same, appended to `out` (4 zero bytes for the CRC, then the payload);
// returns the payload's CRC. Reserving room is the caller's (a block reserves
// for all its records at once).
uint32_t AppendRecord(std::string& out, const Record& record, int64_t append_ms,
                      std::string_view cursor);
// An upper bound on the bytes AppendRecord adds for `record`, to reserve
// room up front.
size_t EncodedSizeBound(const Record& record, std::string_view cursor);
// Fills in the CRC over the payload and `seq`.
void Seal(EncodedRecord& encoded, uint64_t seq);
// The same for a record whose 4 CRC bytes start at `crc_slot`.
void SealAt(char* crc_slot, uint32_t payload_crc, uint64_t seq);
// Whether a stored value's CRC matches its payload and `seq`.
bool CheckRecord(std::string_view stored, uint64_t seq);
// The sequence in [lo, hi] that a stored record's CRC matches, if any (one
// pass over the payload whatever the range).
std::optional<uint64_t> MatchingSeq(std::string_view stored, uint64_t lo,
                                    uint64_t hi);

// A stored record, decoded; the views point into the stored bytes.
struct DecodedRecord {
  int64_t append_ms = 0;
  std::string_view topic;
  std::string_view key;    // data() == nullptr: null
  std::string_view value;  // data() == nullptr: null
  int32_t partition = kAnyPartition;
  int64_t timestamp_ms = 0;
  std::vector<Header> headers;
  std::string_view cursor;

  Record AsRecord() const {
    return Record{.topic = topic,
                  .key = key,
                  .value = value,
                  .partition = partition,
                  .timestamp_ms = timestamp_ms,
                  .headers = headers};
  }
};
// Decodes a stored value (CRC not checked: see CheckRecord).
absl::StatusOr<DecodedRecord> DecodeRecord(std::string_view stored);

// A quarantine entry's value: why, the sequence it had (0 if unknown), how
// many records it stands for (a gap of missing records is one entry), when,
// and the bytes as found (possibly empty).
struct QuarantineEntry {
  std::string reason;
  uint64_t seq = 0;
  uint64_t records = 1;
  int64_t quarantined_ms = 0;
  std::string bytes;
};
std::string EncodeQuarantine(const QuarantineEntry& entry);
absl::StatusOr<QuarantineEntry> DecodeQuarantine(std::string_view value);

}  // namespace exactly::internal::spool

#endif  // EXACTLY_SDK_SRC_SPOOL_FORMAT_H_
