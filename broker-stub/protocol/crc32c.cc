#include "protocol/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace exactly::protocol {

namespace {

constexpr uint32_t kPolynomial = 0x82f63b78;  // reflected Castagnoli

// Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero
// bytes.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? kPolynomial : 0);
      t[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; ++b) {
      for (int k = 1; k < 8; ++k)
        t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    }
  }
};
constexpr Tables kTables;

uint32_t ExtendPortable(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = kTables.t;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p,
                8);  // little-endian hosts only, like the rest of x86/arm64
    word ^= crc;
    crc = t[7][word & 0xff] ^ t[6][(word >> 8) & 0xff] ^
          t[5][(word >> 16) & 0xff] ^ t[4][(word >> 24) & 0xff] ^
          t[3][(word >> 32) & 0xff] ^ t[2][(word >> 40) & 0xff] ^
          t[1][(word >> 48) & 0xff] ^ t[0][word >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return crc;
}

// CRC of `crc` followed by n zero bytes, as one 32x32 GF(2) matrix applied
// through four byte tables. The three-stream SSE4.2 path below uses it to
// join its streams.
class ZeroShift {
 public:
  explicit ZeroShift(size_t n) {
    // The image of each single bit after n zero bytes; linear, so a register
    // is the XOR of its bits' images.
    std::array<uint32_t, 32> bit{};
    for (int i = 0; i < 32; ++i) {
      uint32_t c = uint32_t{1} << i;
      for (size_t k = 0; k < n; ++k) c = (c >> 8) ^ kTables.t[0][c & 0xff];
      bit[i] = c;
    }
    for (int byte = 0; byte < 4; ++byte) {
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t image = 0;
        for (int i = 0; i < 8; ++i) {
          if (b & (1u << i)) image ^= bit[byte * 8 + i];
        }
        table_[byte][b] = image;
      }
    }
  }
  uint32_t operator()(uint32_t crc) const {
    return table_[0][crc & 0xff] ^ table_[1][(crc >> 8) & 0xff] ^
           table_[2][(crc >> 16) & 0xff] ^ table_[3][crc >> 24];
  }

 private:
  std::array<std::array<uint32_t, 256>, 4> table_{};
};

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint64_t Sse42Words(uint64_t c,
                                                      const uint8_t* p,
                                                      size_t words) {
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, p + 8 * i, 8);
    c = _mm_crc32_u64(c, word);
  }
  return c;
}

// The crc32 instruction has a latency of three cycles but accepts one per
// cycle: three independent streams over adjacent stripes keep it busy, and
// ZeroShift joins them (crc(A|B) = shift(crc(A), |B|) ^ crc0(B)).
constexpr size_t kStripe = 1024;

__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc,
                                                       const uint8_t* p,
                                                       size_t n) {
  static const ZeroShift shift_stripe(kStripe);
  uint64_t c = crc;
  while (n >= 3 * kStripe) {
    uint64_t a = c, b = 0, d = 0;
    for (size_t i = 0; i < kStripe; i += 8) {
      uint64_t wa, wb, wd;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kStripe + i, 8);
      std::memcpy(&wd, p + 2 * kStripe + i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      d = _mm_crc32_u64(d, wd);
    }
    uint32_t joined =
        shift_stripe(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b);
    joined = shift_stripe(joined) ^ static_cast<uint32_t>(d);
    c = joined;
    p += 3 * kStripe;
    n -= 3 * kStripe;
  }
  c = Sse42Words(c, p, n / 8);
  p += n / 8 * 8;
  n %= 8;
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  crc = ~crc;
#if defined(__x86_64__)
  if (HasSse42()) return ~ExtendSse42(crc, p, data.size());
#endif
  return ~ExtendPortable(crc, p, data.size());
}

}  // namespace exactly::protocol
