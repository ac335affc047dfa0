// The record-batch compression codecs Kafka defines (attributes bits 0-2).
#ifndef EXACTLY_BROKER_PROTOCOL_COMPRESSION_H_
#define EXACTLY_BROKER_PROTOCOL_COMPRESSION_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace exactly::protocol {

enum class Compression : int8_t {
  kNone = 0,
  kGzip = 1,
  kSnappy = 2,
  kLz4 = 3,
  kZstd = 4
};

std::string_view CompressionName(Compression codec);

// Decompresses a batch's records section. Output beyond `max_output` bytes is
// refused, so a small hostile input cannot make the broker allocate without
// bound. Snappy accepts both the raw block format (librdkafka) and the xerial
// framing (the Java client); LZ4 is the frame format.
absl::StatusOr<std::string> Decompress(Compression codec,
                                       std::string_view input,
                                       size_t max_output);

// Compresses `input` with `codec` (snappy as a raw block, lz4 as a frame).
absl::StatusOr<std::string> Compress(Compression codec, std::string_view input);

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_COMPRESSION_H_
