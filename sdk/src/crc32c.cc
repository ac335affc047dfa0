#include "crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace exactly::internal::crc32c {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // reflected 0x1EDC6F41

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1) != 0 ? (crc >> 1) ^ kPolynomial : crc >> 1;
    }
    t[0][i] = crc;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t k = 1; k < 8; ++k) {
      t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
    }
  }
  return t;
}

constexpr Tables kTables = MakeTables();

uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc,
                                                          const uint8_t* p,
                                                          size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return ~static_cast<uint32_t>(c);
}

bool DetectHardware() { return __builtin_cpu_supports("sse4.2"); }
#else
uint32_t ExtendHardware(uint32_t crc, const uint8_t* p, size_t n) {
  return ExtendPortable(crc, p, n);
}
bool DetectHardware() { return false; }
#endif

const bool kHardware = DetectHardware();

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (size >= 8) {
    const uint64_t v = LoadLittleEndian64(p) ^ c;
    c = kTables[7][v & 0xFF] ^ kTables[6][(v >> 8) & 0xFF] ^
        kTables[5][(v >> 16) & 0xFF] ^ kTables[4][(v >> 24) & 0xFF] ^
        kTables[3][(v >> 32) & 0xFF] ^ kTables[2][(v >> 40) & 0xFF] ^
        kTables[1][(v >> 48) & 0xFF] ^ kTables[0][v >> 56];
    p += 8;
    size -= 8;
  }
  while (size > 0) {
    c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFF];
    --size;
  }
  return ~c;
}

uint32_t Extend(uint32_t crc, const void* data, size_t size) {
  if (kHardware) {
    return ExtendHardware(crc, static_cast<const uint8_t*>(data), size);
  }
  return ExtendPortable(crc, data, size);
}

bool UsesHardware() { return kHardware; }

}  // namespace exactly::internal::crc32c
