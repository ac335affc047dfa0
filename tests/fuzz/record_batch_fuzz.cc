// A Produce request's records for one partition, checked as the broker checks
// them (CheckProduceRecords, then CheckProduceBatches, which decompresses and
// parses every record), then split and decoded as a Fetch reader would. The
// first input byte is the Produce version; the rest is the records.
//
// Random bytes rarely carry a valid CRC-32C, which would stop the checks at
// the CRC: the records are checked once as they are and once with the CRC of
// every batch that fits recomputed. Every codec's Decompress also runs on the
// raw bytes, and Compress then Decompress must give back the input.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/compression.h"
#include "protocol/produce_request_check.h"
#include "protocol/record_batch.h"

namespace exactly::protocol {
namespace {

// Small enough that a decompression bomb costs little per execution.
constexpr size_t kMaxDecompressed = 1 << 20;

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckRecords(int16_t version, std::string_view records) {
  (void)FirstBatchIsTransactional(records);
  (void)CheckProduceRecords(version, records);
  BatchCheck check = CheckProduceBatches(
      records, {.max_decompressed_bytes = kMaxDecompressed});
  if (check.ok()) {
    for (const RecordBatchView& batch : check.batches) {
      absl::StatusOr<std::vector<Record>> decoded =
          DecodeRecords(batch, kMaxDecompressed);
      Check(decoded.ok());  // what the check accepted must decode
    }
  }
  absl::StatusOr<std::vector<RecordBatchView>> split = SplitBatches(records);
  if (!split.ok()) return;
  for (const RecordBatchView& batch : *split) {
    (void)DecodeRecords(batch, kMaxDecompressed);
    if (batch.header.is_control()) (void)ReadControlType(batch);
  }
}

// The records with the CRC of each whole batch recomputed, as far as the
// batch lengths tile the input.
std::string WithFixedCrcs(std::string_view records) {
  std::string fixed(records);
  size_t at = 0;
  while (fixed.size() - at >= kBatchHeaderSize) {
    absl::StatusOr<RecordBatchHeader> h =
        ParseBatchHeader(std::string_view(fixed).substr(at));
    if (!h.ok() || h->batch_length < 0) break;
    size_t size = h->size_in_bytes();
    if (size < kBatchHeaderSize || size > fixed.size() - at) break;
    UpdateBatchCrc(fixed.data() + at, size);
    at += size;
  }
  return fixed;
}

void CheckCodecs(std::string_view input) {
  for (Compression codec :
       {Compression::kNone, Compression::kGzip, Compression::kSnappy,
        Compression::kLz4, Compression::kZstd}) {
    (void)Decompress(codec, input, kMaxDecompressed);
    absl::StatusOr<std::string> compressed = Compress(codec, input);
    if (!compressed.ok()) continue;
    absl::StatusOr<std::string> back =
        Decompress(codec, *compressed, input.size());
    Check(back.ok() && *back == input);
  }
}

}  // namespace
}  // namespace exactly::protocol

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace exactly::protocol;
  if (size < 1) return 0;
  const int16_t version = static_cast<int16_t>(data[0] % 16);
  std::string_view records(reinterpret_cast<const char*>(data) + 1, size - 1);
  CheckRecords(version, records);
  const std::string fixed = WithFixedCrcs(records);
  if (fixed != records) CheckRecords(version, fixed);
  CheckCodecs(records);
  return 0;
}
