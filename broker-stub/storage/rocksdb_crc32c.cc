// rocksdb::crc32c::Extend, defined here so that it takes the place of
// librocksdb's; see rocksdb_crc32c.h for why and when.
#include "storage/rocksdb_crc32c.h"

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "crc32c/crc32c.h"

namespace exactly::broker {
namespace {

using ExtendFn = uint32_t (*)(uint32_t init_crc, const char* data, size_t n);

// The mangled name of rocksdb::crc32c::Extend(uint32_t, const char*, size_t).
constexpr char kRocksDbExtendSymbol[] = "_ZN7rocksdb6crc32c6ExtendEjPKcm";

uint32_t ExactlyExtend(uint32_t init_crc, const char* data, size_t n) {
  return crc32c::Extend(init_crc, data, n);
}

// librocksdb's own definition: the next one after this executable's in the
// lookup order. Null when RocksDB is not a shared library of this process.
ExtendFn RocksDbOwnExtend() {
  static const ExtendFn own =
      reinterpret_cast<ExtendFn>(dlsym(RTLD_NEXT, kRocksDbExtendSymbol));
  return own;
}

// Whether `own` gives our values on every length the WAL and blob writers
// produce, from short headers to multi-KiB records, at odd alignments, from
// several starting CRCs.
bool AgreesWith(ExtendFn own) {
  std::array<char, 4096 + 8> bytes;
  uint32_t x = 0x9E3779B9;
  for (char& b : bytes) {
    x = x * 1664525 + 1013904223;
    b = static_cast<char>(x >> 24);
  }
  for (size_t offset : {0, 1, 3, 7}) {
    for (size_t n : {0,  1,  2,   3,   4,    7,    8,    9,    15,   16,  17,
                     31, 64, 255, 256, 1000, 1024, 3071, 3072, 3073, 4096}) {
      for (uint32_t init : {0u, 0xFFFFFFFFu, 0x12345678u}) {
        const char* p = bytes.data() + offset;
        if (own(init, p, n) != ExactlyExtend(init, p, n)) return false;
      }
    }
  }
  return own(0, "123456789", 9) == 0xE3069283;
}

ExtendFn Choose() {
  ExtendFn own = RocksDbOwnExtend();
  if (own == nullptr) return &ExactlyExtend;  // ours is the only definition
  return AgreesWith(own) ? &ExactlyExtend : own;
}

// What every call reaches; null until the first call chooses. Two threads
// that both see null make the same choice, so the race is harmless.
std::atomic<ExtendFn> g_target{nullptr};

ExtendFn Target() {
  ExtendFn target = g_target.load(std::memory_order_relaxed);
  if (target == nullptr) {
    target = Choose();
    g_target.store(target, std::memory_order_relaxed);
  }
  return target;
}

}  // namespace

RocksDbCrc32c ActiveRocksDbCrc32c() {
  return Target() == &ExactlyExtend ? RocksDbCrc32c::kExactly
                                    : RocksDbCrc32c::kRocksDbOwn;
}

std::string_view DescribeRocksDbCrc32c() {
  if (ActiveRocksDbCrc32c() == RocksDbCrc32c::kRocksDbOwn) {
    return "RocksDB's CRC-32C: RocksDB's own";
  }
  return crc32c::UsesHardware()
             ? "RocksDB's CRC-32C: exactly's, with the SSE4.2 instruction "
               "(checked against RocksDB's own)"
             : "RocksDB's CRC-32C: exactly's table (this CPU has no SSE4.2)";
}

void UseRocksDbOwnCrc32cForTest(bool own) {
  ExtendFn rocksdb_own = RocksDbOwnExtend();
  g_target.store(own && rocksdb_own != nullptr ? rocksdb_own : Choose(),
                 std::memory_order_relaxed);
}

}  // namespace exactly::broker

// The definition that stands in for librocksdb's (declared as in RocksDB's
// util/crc32c.h, which is not among its public headers).
namespace rocksdb::crc32c {

uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  return exactly::broker::Target()(init_crc, data, n);
}

}  // namespace rocksdb::crc32c
