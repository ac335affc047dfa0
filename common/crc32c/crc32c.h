// CRC-32C (Castagnoli), the project's one implementation: the checksum of Kafka
// record batches (the bundled broker) and of the spool's records (the SDK).
//
// Extend() picks, at its first call, the fastest implementation the CPU has:
// the SSE4.2 crc32 instruction (three interleaved streams for long inputs, one
// stream for short ones) or a portable slicing-by-8 table. All of them give
// the same values (Value("123456789") == 0xE3069283).
#ifndef EXACTLY_COMMON_CRC32C_CRC32C_H_
#define EXACTLY_COMMON_CRC32C_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace exactly::crc32c {

// The CRC of `data` appended to a message whose CRC was `crc` (0 for the
// empty message): Extend(Extend(0, a), b) == Value(a + b).
uint32_t Extend(uint32_t crc, const void* data, size_t n);

inline uint32_t Extend(uint32_t crc, std::string_view data) {
  return Extend(crc, data.data(), data.size());
}

inline uint32_t Value(std::string_view data) { return Extend(0, data); }

// Each implementation on its own, whatever Extend() chose (tests, benchmarks).
// The table, on every CPU:
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
// The SSE4.2 instruction over one stream, and over three interleaved streams
// (blocks of 3 KiB, then of 768 B; one stream for the rest). Where the CPU
// lacks the instruction (HardwareAvailable() is false) they are the table.
uint32_t ExtendHardware1(uint32_t crc, const void* data, size_t n);
uint32_t ExtendHardware3(uint32_t crc, const void* data, size_t n);

// Whether the CPU has the instruction.
bool HardwareAvailable();
// Whether Extend() uses it now.
bool UsesHardware();

// For benchmarks that measure what the instruction is worth: kPortable makes
// Extend() use the table from now on, kAuto restores the choice by CPU. Not
// meant to race with Extend() (a call in flight finishes with either).
enum class Implementation { kAuto, kPortable };
void ForceImplementationForBenchmark(Implementation implementation);

}  // namespace exactly::crc32c

#endif  // EXACTLY_COMMON_CRC32C_CRC32C_H_
