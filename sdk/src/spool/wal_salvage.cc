#include "spool/wal_salvage.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include "crc32c/crc32c.h"

namespace exactly::internal::spool {
namespace {

constexpr size_t kBlockSize = 32768;
constexpr size_t kHeaderSize = 7;
constexpr size_t kRecyclableHeaderSize = 11;

enum RecordType : uint8_t {
  kZeroType = 0,
  kFullType = 1,
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
  kRecyclableFullType = 5,
  kRecyclableLastType = 8,
};

// WriteBatch entry tags (rocksdb/db/dbformat.h).
enum Tag : uint8_t {
  kTypeDeletion = 0x0,
  kTypeValue = 0x1,
  kTypeMerge = 0x2,
  kTypeLogData = 0x3,
  kTypeColumnFamilyDeletion = 0x4,
  kTypeColumnFamilyValue = 0x5,
  kTypeColumnFamilyMerge = 0x6,
  kTypeSingleDeletion = 0x7,
  kTypeColumnFamilySingleDeletion = 0x8,
  kTypeNoop = 0xD,
  kTypeColumnFamilyRangeDeletion = 0xE,
  kTypeRangeDeletion = 0xF,
};

uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

uint32_t Fixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  }
  return v;
}

bool GetVarint32(std::string_view& in, uint32_t& v) {
  v = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    if (in.empty()) return false;
    const uint8_t b = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    v |= static_cast<uint32_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

bool GetSlice(std::string_view& in, std::string_view& out) {
  uint32_t n = 0;
  if (!GetVarint32(in, n) || n > in.size()) return false;
  out = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

// Parses a write batch as far as it goes; false if it stopped early.
bool ParseBatch(std::string_view batch, WalSalvage& out) {
  if (batch.size() < 12) return false;
  batch.remove_prefix(12);  // sequence, count
  while (!batch.empty()) {
    const uint8_t tag = static_cast<uint8_t>(batch[0]);
    batch.remove_prefix(1);
    std::string_view key, value;
    uint32_t cf = 0;
    switch (tag) {
      case kTypeValue:
        if (!GetSlice(batch, key) || !GetSlice(batch, value)) return false;
        out.puts.push_back({std::string(key), std::string(value)});
        break;
      case kTypeColumnFamilyValue:
      case kTypeColumnFamilyMerge:
        if (!GetVarint32(batch, cf) || !GetSlice(batch, key) ||
            !GetSlice(batch, value)) {
          return false;
        }
        break;  // the spool uses the default column family only
      case kTypeMerge:
      case kTypeRangeDeletion:
        if (!GetSlice(batch, key) || !GetSlice(batch, value)) return false;
        break;
      case kTypeColumnFamilyRangeDeletion:
        if (!GetVarint32(batch, cf) || !GetSlice(batch, key) ||
            !GetSlice(batch, value)) {
          return false;
        }
        break;
      case kTypeDeletion:
      case kTypeSingleDeletion:
      case kTypeLogData:
        if (!GetSlice(batch, key)) return false;
        break;
      case kTypeColumnFamilyDeletion:
      case kTypeColumnFamilySingleDeletion:
        if (!GetVarint32(batch, cf) || !GetSlice(batch, key)) return false;
        break;
      case kTypeNoop:
        break;
      default:
        return false;  // a tag this parser does not know, or damage
    }
  }
  return true;
}

void Salvage(std::string_view batch, WalSalvage& out) {
  ++out.corrupt_entries;
  if (!ParseBatch(batch, out)) ++out.unparsed_entries;
}

}  // namespace

void SalvageWalBytes(const std::string& data, WalSalvage& out) {
  std::string assembling;
  bool in_fragment = false;
  bool fragment_bad = false;
  auto finish_fragment = [&] {
    if (in_fragment && fragment_bad) Salvage(assembling, out);
    in_fragment = false;
    fragment_bad = false;
    assembling.clear();
  };
  // After a checksum failure RocksDB's reader drops the rest of the block
  // (the length it read may be damaged too), so the records there are lost
  // to it even when their own checksums hold: they are salvaged as well.
  size_t dropped_until = 0;
  size_t offset = 0;
  while (offset < data.size()) {
    const size_t left_in_block = kBlockSize - offset % kBlockSize;
    if (left_in_block < kHeaderSize) {  // block trailer
      offset += left_in_block;
      continue;
    }
    if (offset + kHeaderSize > data.size()) break;  // torn tail
    const char* h = data.data() + offset;
    const uint32_t length =
        static_cast<uint8_t>(h[4]) |
        (static_cast<uint32_t>(static_cast<uint8_t>(h[5])) << 8);
    const uint8_t type = static_cast<uint8_t>(h[6]);
    if (type == kZeroType && length == 0) {  // preallocated, never written
      offset += left_in_block;
      continue;
    }
    const bool recyclable =
        type >= kRecyclableFullType && type <= kRecyclableLastType;
    const size_t header = recyclable ? kRecyclableHeaderSize : kHeaderSize;
    if (header + length > left_in_block) {
      // A damaged length: nothing else in this block can be located (RocksDB
      // drops the rest of the block too).
      if (in_fragment) fragment_bad = true;
      offset += left_in_block;
      continue;
    }
    if (offset + header + length > data.size()) break;  // torn tail
    const std::string_view payload(h + header, length);
    uint32_t crc = crc32c::Extend(0, &type, 1);
    if (recyclable) crc = crc32c::Extend(crc, h + kHeaderSize, 4);
    crc = crc32c::Extend(crc, payload.data(), payload.size());
    if (crc != Unmask(Fixed32(h))) dropped_until = offset + left_in_block;
    const bool ok = offset >= dropped_until;
    const uint8_t base = recyclable ? type - 4 : type;
    switch (base) {
      case kFullType:
        finish_fragment();
        if (!ok) Salvage(payload, out);
        break;
      case kFirstType:
        finish_fragment();
        in_fragment = true;
        fragment_bad = !ok;
        assembling.assign(payload);
        break;
      case kMiddleType:
      case kLastType:
        if (!in_fragment) {
          // An orphan: its FIRST was lost, or its own type byte is damaged.
          if (!ok) Salvage(payload, out);
          break;
        }
        assembling.append(payload);
        fragment_bad |= !ok;
        if (base == kLastType) finish_fragment();
        break;
      default:
        // Other record types (compression settings, ...) carry no batch; an
        // unknown type with a bad checksum is a damaged type byte.
        if (!ok) {
          finish_fragment();
          Salvage(payload, out);
        }
        break;
    }
    offset += header + length;
  }
  finish_fragment();
}

WalSalvage SalvageWal(const std::string& dir) {
  WalSalvage out;
  std::error_code ec;
  std::vector<std::filesystem::path> logs;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".log" &&
        entry.path().filename().string() != "LOG") {
      logs.push_back(entry.path());
    }
  }
  std::sort(logs.begin(), logs.end());
  for (const auto& path : logs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    const std::string data((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    SalvageWalBytes(data, out);
  }
  return out;
}

}  // namespace exactly::internal::spool
