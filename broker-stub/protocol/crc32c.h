// CRC-32C (Castagnoli), the checksum of Kafka record batches (and of exactly's
// spool records).
#ifndef EXACTLY_BROKER_PROTOCOL_CRC32C_H_
#define EXACTLY_BROKER_PROTOCOL_CRC32C_H_

#include <cstdint>
#include <string_view>

namespace exactly::protocol {

// Extends `crc` (the value of a previous call, or 0 to start) over `data`. Uses
// the SSE4.2 instruction where the CPU has it, a table otherwise; both give the
// same result.
uint32_t Crc32cExtend(uint32_t crc, std::string_view data);

inline uint32_t Crc32c(std::string_view data) { return Crc32cExtend(0, data); }

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_CRC32C_H_
