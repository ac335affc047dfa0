// CRC-32C: the portable table, the SSE4.2 paths, and the choice between them
// that Extend() makes once per process.
#include "crc32c/crc32c.h"

#include <array>
#include <atomic>
#include <cstring>

// The SSE4.2 paths exist on x86-64 only. EXACTLY_CRC32C_PORTABLE_ONLY builds
// what other CPUs get (the table alone), to check that it compiles and agrees.
#if defined(__x86_64__) && !defined(EXACTLY_CRC32C_PORTABLE_ONLY)
#define EXACTLY_CRC32C_SSE42 1
#include <nmmintrin.h>
#endif

namespace exactly::crc32c {
namespace {

// Every function below works on the CRC register itself: the public functions
// invert it before and after, as CRC-32C requires.
using RegisterFn = uint32_t (*)(uint32_t reg, const uint8_t* p, size_t n);

constexpr uint32_t kPolynomial = 0x82F63B78;  // 0x1EDC6F41, bit-reflected

// Slicing-by-8: kTables[k][b] is the register after byte b followed by k zero
// bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t reg = b;
    for (int bit = 0; bit < 8; ++bit) {
      reg = (reg & 1) != 0 ? (reg >> 1) ^ kPolynomial : reg >> 1;
    }
    t[0][b] = reg;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (size_t k = 1; k < 8; ++k) {
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
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

uint32_t PortableRegister(uint32_t reg, const uint8_t* p, size_t n) {
  while (n >= 8) {
    const uint64_t v = LoadLittleEndian64(p) ^ reg;
    reg = kTables[7][v & 0xFF] ^ kTables[6][(v >> 8) & 0xFF] ^
          kTables[5][(v >> 16) & 0xFF] ^ kTables[4][(v >> 24) & 0xFF] ^
          kTables[3][(v >> 32) & 0xFF] ^ kTables[2][(v >> 40) & 0xFF] ^
          kTables[1][(v >> 48) & 0xFF] ^ kTables[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) reg = (reg >> 8) ^ kTables[0][(reg ^ *p++) & 0xFF];
  return reg;
}

#if defined(EXACTLY_CRC32C_SSE42)

// The register after `n` zero bytes, as a 32x32 GF(2) matrix applied through
// four byte tables. The update is linear, so a register is the XOR of its
// bits' images, and crc(A|B) = shift_|B|(crc(A)) ^ crc_from_0(B): that joins
// streams computed independently. Built at compile time.
class ZeroShift {
 public:
  explicit constexpr ZeroShift(size_t n) {
    std::array<uint32_t, 32> image{};
    for (int i = 0; i < 32; ++i) {
      uint32_t reg = uint32_t{1} << i;
      for (size_t k = 0; k < n; ++k) reg = (reg >> 8) ^ kTables[0][reg & 0xFF];
      image[i] = reg;
    }
    for (int byte = 0; byte < 4; ++byte) {
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t sum = 0;
        for (int i = 0; i < 8; ++i) {
          if ((b & (1u << i)) != 0) sum ^= image[byte * 8 + i];
        }
        table_[byte][b] = sum;
      }
    }
  }
  uint32_t operator()(uint32_t reg) const {
    return table_[0][reg & 0xFF] ^ table_[1][(reg >> 8) & 0xFF] ^
           table_[2][(reg >> 16) & 0xFF] ^ table_[3][reg >> 24];
  }

 private:
  std::array<std::array<uint32_t, 256>, 4> table_{};
};

// The crc32 instruction has a latency of three cycles but accepts one per
// cycle: three independent streams over adjacent stripes keep it busy. Blocks
// of 3 x 1 KiB, then of 3 x 256 B for what is left (a 1 KiB input takes one
// of those: 1.8x one stream), then one stream.
constexpr size_t kLongStripe = 1024;
constexpr size_t kShortStripe = 256;
constexpr ZeroShift kShiftLong(kLongStripe);
constexpr ZeroShift kShiftShort(kShortStripe);

// Consumes the blocks of 3 x kStripe bytes at the front of p[0, n).
template <size_t kStripe>
__attribute__((target("sse4.2"))) inline uint32_t ThreeStreamBlocks(
    uint32_t reg, const uint8_t*& p, size_t& n, const ZeroShift& shift) {
  while (n >= 3 * kStripe) {
    uint64_t a = reg, b = 0, c = 0;
    for (size_t i = 0; i < kStripe; i += 8) {
      uint64_t wa, wb, wc;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kStripe + i, 8);
      std::memcpy(&wc, p + 2 * kStripe + i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      c = _mm_crc32_u64(c, wc);
    }
    reg = shift(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b);
    reg = shift(reg) ^ static_cast<uint32_t>(c);
    p += 3 * kStripe;
    n -= 3 * kStripe;
  }
  return reg;
}

__attribute__((target("sse4.2"))) uint32_t OneStreamRegister(uint32_t reg,
                                                             const uint8_t* p,
                                                             size_t n) {
  uint64_t c = reg;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  if (n >= 4) {
    uint32_t word;
    std::memcpy(&word, p, 4);
    c32 = _mm_crc32_u32(c32, word);
    p += 4;
    n -= 4;
  }
  while (n-- > 0) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

__attribute__((target("sse4.2"))) uint32_t ThreeStreamRegister(uint32_t reg,
                                                               const uint8_t* p,
                                                               size_t n) {
  reg = ThreeStreamBlocks<kLongStripe>(reg, p, n, kShiftLong);
  reg = ThreeStreamBlocks<kShortStripe>(reg, p, n, kShiftShort);
  return OneStreamRegister(reg, p, n);
}

bool DetectHardware() {
  __builtin_cpu_init();  // harmless if libgcc's constructor already ran
  return __builtin_cpu_supports("sse4.2");
}

#else  // not x86-64 (or portable only): the table alone

uint32_t OneStreamRegister(uint32_t reg, const uint8_t* p, size_t n) {
  return PortableRegister(reg, p, n);
}
uint32_t ThreeStreamRegister(uint32_t reg, const uint8_t* p, size_t n) {
  return PortableRegister(reg, p, n);
}
bool DetectHardware() { return false; }

#endif

// ThreeStreamRegister takes one stream below 768 bytes: Extend()'s hardware
// path.
RegisterFn ChooseByCpu() {
  return HardwareAvailable() ? &ThreeStreamRegister : &PortableRegister;
}

uint32_t FirstUseRegister(uint32_t reg, const uint8_t* p, size_t n);

// What Extend() calls: FirstUseRegister until the first call has chosen.
// A relaxed load and an indirect call per Extend().
constinit std::atomic<RegisterFn> g_extend{&FirstUseRegister};

RegisterFn Resolved() {
  RegisterFn fn = g_extend.load(std::memory_order_relaxed);
  if (fn != &FirstUseRegister) return fn;
  RegisterFn chosen = ChooseByCpu();
  // Unless a benchmark forced a choice meanwhile.
  g_extend.compare_exchange_strong(fn, chosen, std::memory_order_relaxed);
  return fn == &FirstUseRegister ? chosen : fn;
}

uint32_t FirstUseRegister(uint32_t reg, const uint8_t* p, size_t n) {
  return Resolved()(reg, p, n);
}

const uint8_t* Bytes(const void* data) {
  return static_cast<const uint8_t*>(data);
}

}  // namespace

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  return ~g_extend.load(std::memory_order_relaxed)(~crc, Bytes(data), n);
}

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n) {
  return ~PortableRegister(~crc, Bytes(data), n);
}

uint32_t ExtendHardware1(uint32_t crc, const void* data, size_t n) {
  if (!HardwareAvailable()) return ExtendPortable(crc, data, n);
  return ~OneStreamRegister(~crc, Bytes(data), n);
}

uint32_t ExtendHardware3(uint32_t crc, const void* data, size_t n) {
  if (!HardwareAvailable()) return ExtendPortable(crc, data, n);
  return ~ThreeStreamRegister(~crc, Bytes(data), n);
}

bool HardwareAvailable() {
  static const bool available = DetectHardware();
  return available;
}

bool UsesHardware() { return Resolved() != &PortableRegister; }

void ForceImplementationForBenchmark(Implementation implementation) {
  g_extend.store(implementation == Implementation::kPortable ? &PortableRegister
                                                             : ChooseByCpu(),
                 std::memory_order_relaxed);
}

}  // namespace exactly::crc32c
