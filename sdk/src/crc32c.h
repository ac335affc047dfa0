// CRC-32C (Castagnoli), the checksum the spool stamps on every record: the
// same polynomial as Kafka's record batches and RocksDB's blocks, computed
// here so that the SDK depends on neither. Uses the SSE4.2 crc32 instruction
// when the CPU has it, a slicing-by-8 table otherwise; both give the same
// values (crc32c("123456789") == 0xE3069283).
#ifndef EXACTLY_SDK_SRC_CRC32C_H_
#define EXACTLY_SDK_SRC_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace exactly::internal::crc32c {

// The CRC of `data` appended to a message whose CRC was `crc` (0 for the
// empty message): Extend(Extend(0, a), b) == Value(a + b).
uint32_t Extend(uint32_t crc, const void* data, size_t size);

inline uint32_t Value(std::string_view data) {
  return Extend(0, data.data(), data.size());
}

// The portable table implementation, whatever the CPU (for tests).
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size);

// Whether Extend() uses the CPU instruction.
bool UsesHardware();

}  // namespace exactly::internal::crc32c

#endif  // EXACTLY_SDK_SRC_CRC32C_H_
