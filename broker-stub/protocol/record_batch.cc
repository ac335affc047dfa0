#include "protocol/record_batch.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "crc32c/crc32c.h"
#include "protocol/serde.h"

namespace exactly::protocol {

namespace {

template <class T>
void PutBigEndian(char* out, T value) {
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(value);
  for (size_t i = 0; i < sizeof(T); ++i) {
    out[i] = static_cast<char>(u >> (8 * (sizeof(T) - 1 - i)));
  }
}

// Decodes the records of a batch's (decompressed) records section into `out`.
absl::Status WalkRecords(const RecordBatchHeader& h, std::string_view section,
                         std::vector<Record>* out) {
  Decoder d(section, 0, false);
  for (int32_t i = 0; i < h.record_count; ++i) {
    int32_t length = 0;
    d.Varint(length);
    if (!d.ok()) return d.status();
    if (length < 0 || static_cast<size_t>(length) > d.remaining()) {
      return absl::InvalidArgumentError(
          absl::StrCat("record ", i, " of ", h.record_count, " claims ", length,
                       " bytes; ", d.remaining(), " remain"));
    }
    size_t end = d.position() + static_cast<size_t>(length);
    int8_t attributes = 0;
    int64_t timestamp_delta = 0;
    int32_t offset_delta = 0;
    d.Int8(attributes);
    d.Varlong(timestamp_delta);
    d.Varint(offset_delta);
    auto read_blob = [&](std::optional<std::string>* blob) {
      int32_t n = 0;
      d.Varint(n);
      if (!d.ok()) return;
      if (n < -1 || (n >= 0 && static_cast<size_t>(n) > d.remaining())) {
        d.Fail("record field length");
        return;
      }
      if (n >= 0) {
        std::string_view bytes = d.Raw(static_cast<size_t>(n));
        blob->emplace(bytes);
      } else {
        blob->reset();
      }
    };
    Record r;
    read_blob(&r.key);
    read_blob(&r.value);
    int32_t header_count = 0;
    d.Varint(header_count);
    if (!d.ok()) return d.status();
    if (header_count < 0 || static_cast<size_t>(header_count) > d.remaining()) {
      return absl::InvalidArgumentError(
          absl::StrCat("record ", i, ": bad header count"));
    }
    for (int32_t k = 0; k < header_count && d.ok(); ++k) {
      std::optional<std::string> key;
      RecordHeaderField field;
      read_blob(&key);
      if (d.ok() && !key) return absl::InvalidArgumentError("null header key");
      read_blob(&field.value);
      if (key) {
        field.key = std::move(*key);
        r.headers.push_back(std::move(field));
      }
    }
    if (!d.ok()) return d.status();
    if (d.position() != end) {
      return absl::InvalidArgumentError(absl::StrCat(
          "record ", i, ": length ", length, " does not match its fields"));
    }
    r.offset = WrappingAdd(h.base_offset, offset_delta);
    r.timestamp = (h.attributes & kAttrLogAppendTime) != 0
                      ? h.max_timestamp
                      : WrappingAdd(h.base_timestamp, timestamp_delta);
    out->push_back(std::move(r));
  }
  if (d.remaining() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(d.remaining(),
                                                   " bytes after the batch's ",
                                                   h.record_count, " records"));
  }
  return absl::OkStatus();
}

// A batch's records section: a view of the batch itself when uncompressed, the
// decompressed bytes otherwise.
struct RecordsSection {
  std::string decompressed;
  std::string_view view;
};

absl::Status ReadRecordsSection(const RecordBatchView& batch, size_t max_bytes,
                                RecordsSection* out) {
  std::string_view section = batch.bytes.substr(kBatchHeaderSize);
  if (batch.header.compression() == Compression::kNone) {
    out->view = section;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> d =
      Decompress(batch.header.compression(), section, max_bytes);
  if (!d.ok()) return d.status();
  out->decompressed = std::move(*d);
  out->view = out->decompressed;
  return absl::OkStatus();
}

// The validation-only twin of WalkRecords, on raw pointers: it runs for every
// batch a producer sends, so it copies nothing and checks each varint's bounds
// inline.
class RecordScanner {
 public:
  explicit RecordScanner(std::string_view s)
      : p_(reinterpret_cast<const uint8_t*>(s.data())), end_(p_ + s.size()) {}

  absl::Status Check(int32_t record_count) {
    for (int32_t i = 0; i < record_count; ++i) {
      int64_t length = 0;
      if (!Varint(&length) || length < 0 || length > end_ - p_) {
        return Bad(i, "record length");
      }
      const uint8_t* record_end = p_ + length;
      int64_t unused = 0, key = 0, value = 0, headers = 0;
      if (p_ >= record_end) return Bad(i, "empty record");
      ++p_;  // attributes
      if (!Varint(&unused) || !Varint(&unused))
        return Bad(i, "timestamp or offset delta");
      if (!Blob(&key, record_end) || !Blob(&value, record_end))
        return Bad(i, "key or value");
      if (!Varint(&headers) || headers < 0 || headers > record_end - p_) {
        return Bad(i, "header count");
      }
      for (int64_t h = 0; h < headers; ++h) {
        int64_t header_key = 0;
        if (!Blob(&header_key, record_end) || header_key < 0 ||
            !Blob(&unused, record_end)) {
          return Bad(i, "header");
        }
      }
      if (p_ != record_end) return Bad(i, "length does not match its fields");
    }
    if (p_ != end_) {
      return absl::InvalidArgumentError(absl::StrCat(
          end_ - p_, " bytes after the batch's ", record_count, " records"));
    }
    return absl::OkStatus();
  }

 private:
  // A zig-zag varint of at most 64 bits.
  bool Varint(int64_t* v) {
    uint64_t raw = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return false;
      uint8_t b = *p_++;
      raw |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = static_cast<int64_t>((raw >> 1) ^ (~(raw & 1) + 1));
        return true;
      }
    }
    return false;
  }
  // A length-prefixed (-1 = null) byte string inside the current record.
  bool Blob(int64_t* length, const uint8_t* record_end) {
    if (!Varint(length) || *length < -1 || *length > record_end - p_)
      return false;
    if (*length > 0) p_ += *length;
    return true;
  }
  static absl::Status Bad(int32_t index, std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("record ", index, ": malformed ", std::string(what)));
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

void EncodeRecord(const RecordSpec& r, int32_t offset_delta, std::string* out) {
  std::string body;
  Encoder e(&body, 0, false);
  e.Int8(0);
  e.Varlong(r.timestamp_delta);
  e.Varint(offset_delta);
  auto blob = [&](const std::optional<std::string>& b) {
    if (!b) {
      e.Varint(-1);
      return;
    }
    e.Varint(static_cast<int32_t>(b->size()));
    body.append(*b);
  };
  blob(r.key);
  blob(r.value);
  e.Varint(static_cast<int32_t>(r.headers.size()));
  for (const RecordHeaderField& h : r.headers) {
    blob(h.key);
    blob(h.value);
  }
  Encoder length(out, 0, false);
  length.Varint(static_cast<int32_t>(body.size()));
  out->append(body);
}

// Fills the 61 header bytes at the front of `batch` (records already after
// them) from `h`, with the batch length taken from `batch`'s size and the
// magic byte and CRC computed.
void WriteBatchHeader(const RecordBatchHeader& h, std::string* batch) {
  char* p = batch->data();
  PutBigEndian<int64_t>(p, h.base_offset);
  PutBigEndian<int32_t>(
      p + 8, static_cast<int32_t>(batch->size() - kBatchLengthFieldEnd));
  PutBigEndian<int32_t>(p + 12, h.partition_leader_epoch);
  p[kBatchMagicOffset] = kCurrentMagic;
  PutBigEndian<int16_t>(p + 21, h.attributes);
  PutBigEndian<int32_t>(p + 23, h.last_offset_delta);
  PutBigEndian<int64_t>(p + 27, h.base_timestamp);
  PutBigEndian<int64_t>(p + 35, h.max_timestamp);
  PutBigEndian<int64_t>(p + 43, h.producer_id);
  PutBigEndian<int16_t>(p + 51, h.producer_epoch);
  PutBigEndian<int32_t>(p + 53, h.base_sequence);
  PutBigEndian<int32_t>(p + 57, h.record_count);
  UpdateBatchCrc(batch->data(), batch->size());
}

}  // namespace

int32_t RecordBatchHeader::IncrementSequence(int32_t sequence,
                                             int32_t increment) {
  if (sequence > std::numeric_limits<int32_t>::max() - increment) {
    return increment - (std::numeric_limits<int32_t>::max() - sequence) - 1;
  }
  return sequence + increment;
}

absl::StatusOr<RecordBatchHeader> ParseBatchHeader(std::string_view input) {
  if (input.size() > kBatchMagicOffset &&
      input[kBatchMagicOffset] != kCurrentMagic) {
    return absl::FailedPreconditionError(absl::StrCat(
        "message format magic ", static_cast<int>(input[kBatchMagicOffset]),
        " is not supported; only record batch v2 (magic 2) is"));
  }
  if (input.size() < kBatchHeaderSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("record batch header truncated: ", input.size(), " of ",
                     kBatchHeaderSize, " bytes"));
  }
  RecordBatchHeader h;
  Decoder d(input.substr(0, kBatchHeaderSize), 0, false);
  d.Int64(h.base_offset);
  d.Int32(h.batch_length);
  d.Int32(h.partition_leader_epoch);
  d.Int8(h.magic);
  d.UInt32(h.crc);
  d.Int16(h.attributes);
  d.Int32(h.last_offset_delta);
  d.Int64(h.base_timestamp);
  d.Int64(h.max_timestamp);
  d.Int64(h.producer_id);
  d.Int16(h.producer_epoch);
  d.Int32(h.base_sequence);
  d.Int32(h.record_count);
  if (!d.ok()) return d.status();
  if (h.batch_length <
      static_cast<int32_t>(kBatchHeaderSize - kBatchLengthFieldEnd)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "record batch length ", h.batch_length, " is below the header size"));
  }
  return h;
}

BatchCheck CheckProduceBatches(std::string_view records,
                               const BatchCheckLimits& limits) {
  BatchCheck check;
  auto fail = [&](ErrorCode code, std::string message) {
    check.batches.clear();
    check.error = code;
    check.message = std::move(message);
    return check;
  };
  if (records.empty())
    return fail(ErrorCode::kCorruptMessage, "no record batch");
  size_t index = 0;
  while (!records.empty()) {
    absl::StatusOr<RecordBatchHeader> h = ParseBatchHeader(records);
    if (!h.ok()) {
      return fail(h.status().code() == absl::StatusCode::kFailedPrecondition
                      ? ErrorCode::kUnsupportedForMessageFormat
                      : ErrorCode::kCorruptMessage,
                  absl::StrCat("batch ", index, ": ", h.status().message()));
    }
    if (h->size_in_bytes() > records.size()) {
      return fail(ErrorCode::kCorruptMessage,
                  absl::StrCat("batch ", index, " claims ", h->size_in_bytes(),
                               " bytes but only ", records.size(), " remain"));
    }
    RecordBatchView view{*h, records.substr(0, h->size_in_bytes())};
    uint32_t crc = crc32c::Value(view.bytes.substr(kBatchAttributesOffset));
    if (crc != h->crc) {
      return fail(ErrorCode::kCorruptMessage,
                  absl::StrCat("batch ", index, ": CRC-32C mismatch (stored ",
                               h->crc, ", computed ", crc, ")"));
    }
    if (h->is_control()) {
      return fail(ErrorCode::kInvalidRecord,
                  absl::StrCat("batch ", index,
                               ": clients may not write control batches"));
    }
    // Kafka's LogValidator.validateBatch: an idempotent or transactional
    // batch must be numbered.
    if (h->has_producer_id() && h->base_sequence < 0) {
      return fail(
          ErrorCode::kInvalidRecord,
          absl::StrCat("batch ", index, ": producer ", h->producer_id,
                       " with negative base sequence ", h->base_sequence));
    }
    if (static_cast<int>(h->compression()) >
        static_cast<int>(Compression::kZstd)) {
      return fail(ErrorCode::kUnsupportedCompressionType,
                  absl::StrCat("batch ", index, ": unknown compression codec ",
                               static_cast<int>(h->compression())));
    }
    if (h->record_count <= 0 || h->last_offset_delta != h->record_count - 1) {
      return fail(
          ErrorCode::kInvalidRecord,
          absl::StrCat("batch ", index, ": ", h->record_count,
                       " records with lastOffsetDelta ", h->last_offset_delta));
    }
    RecordsSection section;
    absl::Status read =
        ReadRecordsSection(view, limits.max_decompressed_bytes, &section);
    if (!read.ok()) {
      return fail(ErrorCode::kCorruptMessage,
                  absl::StrCat("batch ", index, ": ", read.message()));
    }
    absl::Status walked = RecordScanner(section.view).Check(h->record_count);
    if (!walked.ok()) {
      return fail(ErrorCode::kCorruptMessage,
                  absl::StrCat("batch ", index, ": ", walked.message()));
    }
    check.batches.push_back(view);
    records.remove_prefix(view.bytes.size());
    ++index;
  }
  return check;
}

absl::StatusOr<std::vector<RecordBatchView>> SplitBatches(
    std::string_view records) {
  std::vector<RecordBatchView> batches;
  while (records.size() >= kBatchHeaderSize) {
    absl::StatusOr<RecordBatchHeader> h = ParseBatchHeader(records);
    if (!h.ok()) return h.status();
    if (h->size_in_bytes() > records.size()) break;  // partial trailing batch
    batches.push_back({*h, records.substr(0, h->size_in_bytes())});
    records.remove_prefix(h->size_in_bytes());
  }
  return batches;
}

absl::StatusOr<std::vector<Record>> DecodeRecords(
    const RecordBatchView& batch, size_t max_decompressed_bytes) {
  RecordsSection section;
  absl::Status read =
      ReadRecordsSection(batch, max_decompressed_bytes, &section);
  if (!read.ok()) return read;
  std::vector<Record> records;
  // The header's count is not trusted for the reservation: a record takes at
  // least 7 bytes (length, attributes, timestamp and offset deltas, key and
  // value lengths, header count), so the section bounds how many there can be.
  constexpr size_t kMinRecordBytes = 7;
  records.reserve(
      std::min(static_cast<size_t>(std::max(0, batch.header.record_count)),
               section.view.size() / kMinRecordBytes));
  absl::Status s = WalkRecords(batch.header, section.view, &records);
  if (!s.ok()) return s;
  return records;
}

absl::StatusOr<std::string> BuildRecordBatch(
    const RecordBatchSpec& spec, const std::vector<RecordSpec>& records) {
  if (records.empty())
    return absl::InvalidArgumentError("a batch needs at least one record");
  std::string section;
  int64_t max_delta = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    EncodeRecord(records[i], static_cast<int32_t>(i), &section);
    max_delta = std::max(max_delta, records[i].timestamp_delta);
  }
  Compression codec =
      static_cast<Compression>(spec.attributes & kAttrCompressionMask);
  if (codec != Compression::kNone) {
    absl::StatusOr<std::string> compressed = Compress(codec, section);
    if (!compressed.ok()) return compressed.status();
    section = std::move(*compressed);
  }
  std::string batch(kBatchHeaderSize, '\0');
  batch += section;
  RecordBatchHeader h;
  h.base_offset = spec.base_offset;
  h.partition_leader_epoch = spec.partition_leader_epoch;
  h.attributes = spec.attributes;
  h.last_offset_delta = static_cast<int32_t>(records.size() - 1);
  h.base_timestamp = spec.base_timestamp;
  h.max_timestamp = WrappingAdd(spec.base_timestamp, max_delta);
  h.producer_id = spec.producer_id;
  h.producer_epoch = spec.producer_epoch;
  h.base_sequence = spec.base_sequence;
  h.record_count = static_cast<int32_t>(records.size());
  WriteBatchHeader(h, &batch);
  return batch;
}

absl::StatusOr<std::string> BuildRetainedBatch(
    const RecordBatchHeader& original, const std::vector<Record>& kept,
    std::optional<int64_t> delete_horizon_ms) {
  int16_t attributes = original.attributes;
  int64_t base_timestamp = original.base_timestamp;
  if (original.has_delete_horizon()) {
    delete_horizon_ms = original.delete_horizon_ms();
  } else if (delete_horizon_ms) {
    attributes |= kAttrDeleteHorizon;
    base_timestamp = *delete_horizon_ms;
  }
  int64_t max_timestamp = original.max_timestamp;
  std::string section;
  if (kept.empty()) {
    attributes &= ~kAttrCompressionMask;
    attributes &= ~kAttrDeleteHorizon;
    base_timestamp = -1;  // Kafka's empty header: RecordBatch.NO_TIMESTAMP
  } else {
    const bool log_append_time = (original.attributes & kAttrLogAppendTime);
    if (!log_append_time) max_timestamp = kept.front().timestamp;
    for (const Record& r : kept) {
      RecordSpec spec;
      spec.key = r.key;
      spec.value = r.value;
      spec.headers = r.headers;
      spec.timestamp_delta = WrappingAdd(r.timestamp, -base_timestamp);
      EncodeRecord(
          spec,
          static_cast<int32_t>(WrappingAdd(r.offset, -original.base_offset)),
          &section);
      if (!log_append_time)
        max_timestamp = std::max(max_timestamp, r.timestamp);
    }
    if (original.compression() != Compression::kNone) {
      absl::StatusOr<std::string> compressed =
          Compress(original.compression(), section);
      if (!compressed.ok()) return compressed.status();
      section = std::move(*compressed);
    }
  }
  std::string batch(kBatchHeaderSize, '\0');
  batch += section;
  RecordBatchHeader h = original;
  h.attributes = attributes;
  h.base_timestamp = base_timestamp;
  h.max_timestamp = max_timestamp;
  h.record_count = static_cast<int32_t>(kept.size());
  WriteBatchHeader(h, &batch);
  return batch;
}

std::string BuildControlBatch(int64_t producer_id, int16_t producer_epoch,
                              ControlType type, int32_t coordinator_epoch,
                              int64_t timestamp_ms) {
  RecordBatchSpec spec;
  spec.attributes = kAttrTransactional | kAttrControl;
  spec.base_timestamp = timestamp_ms;
  spec.producer_id = producer_id;
  spec.producer_epoch = producer_epoch;
  spec.base_sequence = kNoSequence;
  RecordSpec marker;
  marker.key.emplace(4, '\0');
  PutBigEndian<int16_t>(marker.key->data() + 2, static_cast<int16_t>(type));
  marker.value.emplace(6, '\0');
  PutBigEndian<int32_t>(marker.value->data() + 2, coordinator_epoch);
  // One uncompressed record cannot fail to build.
  return *BuildRecordBatch(spec, {marker});
}

absl::StatusOr<ControlType> ReadControlType(const RecordBatchView& batch) {
  if (!batch.header.is_control())
    return absl::InvalidArgumentError("not a control batch");
  absl::StatusOr<std::vector<Record>> records = DecodeRecords(batch);
  if (!records.ok()) return records.status();
  if (records->empty() || !(*records)[0].key || (*records)[0].key->size() < 4) {
    return absl::InvalidArgumentError(
        "control batch without a control record key");
  }
  const std::string& key = *(*records)[0].key;
  int16_t type = static_cast<int16_t>((static_cast<uint8_t>(key[2]) << 8) |
                                      static_cast<uint8_t>(key[3]));
  if (type != 0 && type != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown control record type ", type));
  }
  return static_cast<ControlType>(type);
}

void SetBatchBaseOffset(char* batch, int64_t base_offset) {
  PutBigEndian<int64_t>(batch, base_offset);
}

void SetBatchLeaderEpoch(char* batch, int32_t leader_epoch) {
  PutBigEndian<int32_t>(batch + 12, leader_epoch);
}

void UpdateBatchCrc(char* batch, size_t size) {
  uint32_t crc = crc32c::Value(std::string_view(batch + kBatchAttributesOffset,
                                                size - kBatchAttributesOffset));
  PutBigEndian<uint32_t>(batch + kBatchCrcOffset, crc);
}

}  // namespace exactly::protocol
