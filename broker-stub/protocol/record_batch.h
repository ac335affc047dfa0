// Kafka record batches, message format v2 (magic 2): parse, validate, build,
// and read records.
//
// Layout of the 61-byte batch header, big-endian:
//   baseOffset i64 | batchLength i32 | partitionLeaderEpoch i32 | magic i8 |
//   crc u32 | attributes i16 | lastOffsetDelta i32 | baseTimestamp i64 |
//   maxTimestamp i64 | producerId i64 | producerEpoch i16 | baseSequence i32 |
//   recordCount i32 | records...
// batchLength counts the bytes after itself. The CRC-32C covers attributes to
// the end, so the broker can rewrite baseOffset and partitionLeaderEpoch
// without recomputing it.
#ifndef EXACTLY_BROKER_PROTOCOL_RECORD_BATCH_H_
#define EXACTLY_BROKER_PROTOCOL_RECORD_BATCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/compression.h"
#include "protocol/error_code.h"

namespace exactly::protocol {

inline constexpr size_t kBatchHeaderSize = 61;
inline constexpr size_t kBatchLengthFieldEnd = 12;  // baseOffset + batchLength
inline constexpr size_t kBatchMagicOffset = 16;
inline constexpr size_t kBatchCrcOffset = 17;
inline constexpr size_t kBatchAttributesOffset = 21;
inline constexpr int8_t kCurrentMagic = 2;

inline constexpr int16_t kAttrCompressionMask = 0x07;
inline constexpr int16_t kAttrLogAppendTime = 0x08;
inline constexpr int16_t kAttrTransactional = 0x10;
inline constexpr int16_t kAttrControl = 0x20;
// KIP-534: the log cleaner has stamped the batch with the time after which its
// tombstones (or, for a control batch, the marker itself) may go; the time is
// stored in baseTimestamp.
inline constexpr int16_t kAttrDeleteHorizon = 0x40;

inline constexpr int64_t kNoProducerId = -1;
inline constexpr int16_t kNoProducerEpoch = -1;
inline constexpr int32_t kNoSequence = -1;

// Kafka adds a batch's offset and timestamp deltas in Java longs, which wrap on
// overflow; so does this, without C++'s undefined behaviour (a client may send
// a base offset or timestamp near INT64_MAX).
inline int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}

struct RecordBatchHeader {
  int64_t base_offset = 0;
  int32_t batch_length = 0;
  int32_t partition_leader_epoch = -1;
  int8_t magic = kCurrentMagic;
  uint32_t crc = 0;
  int16_t attributes = 0;
  int32_t last_offset_delta = 0;
  int64_t base_timestamp = 0;
  int64_t max_timestamp = 0;
  int64_t producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
  int32_t base_sequence = kNoSequence;
  int32_t record_count = 0;

  Compression compression() const {
    return static_cast<Compression>(attributes & kAttrCompressionMask);
  }
  bool is_transactional() const {
    return (attributes & kAttrTransactional) != 0;
  }
  bool is_control() const { return (attributes & kAttrControl) != 0; }
  bool has_delete_horizon() const {
    return (attributes & kAttrDeleteHorizon) != 0;
  }
  int64_t delete_horizon_ms() const { return base_timestamp; }
  bool has_producer_id() const { return producer_id >= 0; }
  int64_t last_offset() const {
    return WrappingAdd(base_offset, last_offset_delta);
  }
  // The sequence of the batch's last record; sequences wrap to 0 after
  // INT32_MAX.
  int32_t last_sequence() const {
    return IncrementSequence(base_sequence, last_offset_delta);
  }
  // The whole batch's size in bytes.
  size_t size_in_bytes() const {
    return kBatchLengthFieldEnd + static_cast<size_t>(batch_length);
  }

  static int32_t IncrementSequence(int32_t sequence, int32_t increment);
};

// One batch inside a buffer that the caller keeps alive.
struct RecordBatchView {
  RecordBatchHeader header;
  std::string_view bytes;  // the whole batch, header included
};

// Reads the header at the start of `input`. Fails when fewer than 61 bytes are
// there or the magic byte is not 2; does not check the length against `input`
// or the CRC.
absl::StatusOr<RecordBatchHeader> ParseBatchHeader(std::string_view input);

// The outcome of checking a Produce request's records for one partition.
struct BatchCheck {
  std::vector<RecordBatchView> batches;
  ErrorCode error = ErrorCode::kNone;
  std::string message;  // what is wrong, for logs and v8+ error messages
  bool ok() const { return error == ErrorCode::kNone; }
};

// Limits the checker applies beyond the format itself.
struct BatchCheckLimits {
  size_t max_decompressed_bytes = 256 << 20;
};

// Splits `records` into batches and validates each as Kafka's broker does
// before an append: complete, magic 2 (older formats:
// UNSUPPORTED_FOR_MESSAGE_FORMAT), CRC-32C (CORRUPT_MESSAGE), at least one
// record, lastOffsetDelta consistent with recordCount, and every record well
// formed after decompression (INVALID_RECORD / CORRUPT_MESSAGE). No control
// batches from clients, and no producer id without a sequence
// (INVALID_RECORD).
BatchCheck CheckProduceBatches(std::string_view records,
                               const BatchCheckLimits& limits = {});

// Iterates the batches of a RecordSet without validating records (e.g. a Fetch
// response). A partial batch at the end is ignored, as clients do with a
// truncated fetch.
absl::StatusOr<std::vector<RecordBatchView>> SplitBatches(
    std::string_view records);

struct RecordHeaderField {
  std::string key;
  std::optional<std::string> value;
  bool operator==(const RecordHeaderField&) const = default;
};

// A record with its absolute offset and timestamp.
struct Record {
  int64_t offset = 0;
  int64_t timestamp = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<RecordHeaderField> headers;
};

// The records of `batch`, decompressed.
absl::StatusOr<std::vector<Record>> DecodeRecords(
    const RecordBatchView& batch, size_t max_decompressed_bytes = 256 << 20);

// Everything needed to build a batch (clients' batches in tests, control
// batches in the broker).
struct RecordBatchSpec {
  int64_t base_offset = 0;
  int32_t partition_leader_epoch = -1;
  int16_t attributes = 0;  // compression, transactional, control bits
  int64_t base_timestamp = 0;
  int64_t producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
  int32_t base_sequence = kNoSequence;
};

struct RecordSpec {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<RecordHeaderField> headers;
  int64_t timestamp_delta = 0;
};

// Encodes a batch of `records` (offset deltas 0..n-1), compressed as the
// attributes say, with a correct CRC. maxTimestamp is the largest record
// timestamp.
absl::StatusOr<std::string> BuildRecordBatch(
    const RecordBatchSpec& spec, const std::vector<RecordSpec>& records);

// Rebuilds `original` with only `kept`, a subset of its records in order, as
// Kafka's log cleaner does: same base offset, last offset delta, leader epoch,
// producer id, epoch and base sequence, and codec; every kept record keeps its
// offset and timestamp. With `delete_horizon_ms` the batch carries that horizon
// (kAttrDeleteHorizon); one it already carried stays. An empty `kept` gives
// the header-only batch Kafka writes to keep a producer's last sequence and
// the log's offsets (uncompressed, no records).
absl::StatusOr<std::string> BuildRetainedBatch(
    const RecordBatchHeader& original, const std::vector<Record>& kept,
    std::optional<int64_t> delete_horizon_ms);

// Control record types (the key's second int16).
enum class ControlType : int16_t { kAbort = 0, kCommit = 1 };

// The transaction marker a coordinator writes: one control record, key =
// (version 0, type), value = (version 0, coordinator epoch); attributes
// transactional|control, baseSequence -1.
std::string BuildControlBatch(int64_t producer_id, int16_t producer_epoch,
                              ControlType type, int32_t coordinator_epoch,
                              int64_t timestamp_ms);

// For a control batch: the marker type in its first record's key.
absl::StatusOr<ControlType> ReadControlType(const RecordBatchView& batch);

// Overwrites baseOffset / partitionLeaderEpoch of the batch at `batch` (outside
// the CRC).
void SetBatchBaseOffset(char* batch, int64_t base_offset);
void SetBatchLeaderEpoch(char* batch, int32_t leader_epoch);

// Recomputes and stores the CRC of a whole batch, after changing covered
// fields.
void UpdateBatchCrc(char* batch, size_t size);

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_RECORD_BATCH_H_
