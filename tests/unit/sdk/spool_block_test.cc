// Spool blocks: the records of one Send call in one RocksDB value. They come
// back under the right sequences, and damage costs only the records it hit:
// a flipped byte in a record fails that record's CRC; a damaged length or
// header is walked around by proving records with their CRCs.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "spool/block.h"
#include "spool/format.h"

namespace exactly::internal::spool {
namespace {

std::string ValueOf(uint64_t i) {
  std::string v = "value-" + std::to_string(i) + "-";
  v.resize(100, 'p');
  return v;
}

// A sealed block of `n` records with sequences first .. first + n - 1.
std::string Block(uint64_t first, uint64_t n) {
  BlockBuilder b;
  for (uint64_t i = 0; i < n; ++i) {
    b.Add({.topic = "t", .key = "k", .value = ValueOf(first + i)}, 1000,
          "c" + std::to_string(first + i));
  }
  EXPECT_EQ(b.records(), n);
  return std::string(b.Seal(first));
}

struct Walked {
  std::vector<uint64_t> good;  // passed on and passing their CRC
  std::vector<uint64_t> bad;   // passed on, failing it
};

Walked Walk(const std::string& value, uint64_t last, uint64_t from = 1) {
  Walked out;
  EXPECT_TRUE(ForEachInBlock(
      value, last, from, [&](uint64_t seq, std::string_view stored) {
        (CheckRecord(stored, seq) ? out.good : out.bad).push_back(seq);
        return true;
      }));
  return out;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last,
                            std::vector<uint64_t> except = {}) {
  std::vector<uint64_t> out;
  for (uint64_t s = first; s <= last; ++s) {
    bool skip = false;
    for (uint64_t e : except) skip = skip || e == s;
    if (!skip) out.push_back(s);
  }
  return out;
}

// Where record `seq`'s value starts in the block.
size_t OffsetOf(const std::string& block, uint64_t seq) {
  const size_t at = block.find(ValueOf(seq).substr(0, 12));
  EXPECT_NE(at, std::string::npos);
  return at;
}

TEST(SpoolBlockTest, RecordsComeBackUnderTheirSequences) {
  const std::string block = Block(41, 10);
  std::vector<std::string> values;
  ForEachInBlock(block, 50, 1, [&](uint64_t seq, std::string_view stored) {
    EXPECT_TRUE(CheckRecord(stored, seq));
    absl::StatusOr<DecodedRecord> d = DecodeRecord(stored);
    EXPECT_TRUE(d.ok());
    if (d.ok()) {
      values.emplace_back(d->value);
      EXPECT_EQ(d->cursor, "c" + std::to_string(seq));
    }
    return true;
  });
  ASSERT_EQ(values.size(), 10u);
  for (uint64_t i = 0; i < 10; ++i) EXPECT_EQ(values[i], ValueOf(41 + i));
}

TEST(SpoolBlockTest, TheWalkStartsAtFromAndStopsWhenAsked) {
  const std::string block = Block(1, 10);
  EXPECT_EQ(Walk(block, 10, 7).good, Range(7, 10));
  std::vector<uint64_t> seen;
  EXPECT_FALSE(ForEachInBlock(block, 10, 1, [&](uint64_t seq, auto) {
    seen.push_back(seq);
    return seq < 3;
  }));
  EXPECT_EQ(seen, Range(1, 3));
}

TEST(SpoolBlockTest, SealedUnderOtherSequencesEveryRecordFailsItsCheck) {
  const std::string block = Block(1, 5);
  // Stored under the wrong key: positions give sequences 6..10.
  Walked w = Walk(block, 10);
  EXPECT_TRUE(w.good.empty());
  EXPECT_EQ(w.bad, Range(6, 10));
}

TEST(SpoolBlockTest, AFlippedByteInARecordCostsThatRecordOnly) {
  std::string block = Block(1, 10);
  block[OffsetOf(block, 4) + 3] ^= 0x01;
  Walked w = Walk(block, 10);
  EXPECT_EQ(w.good, Range(1, 10, {4}));
  EXPECT_EQ(w.bad, std::vector<uint64_t>{4});
}

TEST(SpoolBlockTest, ADamagedLengthIsWalkedAroundByTheCrcs) {
  for (uint64_t hit : {1, 5, 10}) {
    std::string block = Block(1, 10);
    // The length field of record `hit` sits just before its CRC, which sits
    // just before its payload; find it from the record before it.
    size_t pos = 9;
    for (uint64_t s = 1; s < hit; ++s) {
      const uint32_t n = static_cast<uint8_t>(block[pos]) |
                         static_cast<uint8_t>(block[pos + 1]) << 8;
      pos += 4 + n;
    }
    block[pos + 1] ^= 0x40;  // the length no longer fits the value
    Walked w = Walk(block, 10);
    EXPECT_EQ(w.good, Range(1, 10, {hit})) << "hit " << hit;
    // Its own bytes cannot be located reliably: left out, the caller
    // reports it missing.
    EXPECT_TRUE(w.bad.empty()) << "hit " << hit;
  }
}

TEST(SpoolBlockTest, ADamagedHeaderIsHarmlessWhileTheLengthsHold) {
  std::string block = Block(1, 10);
  block[0] ^= 0x7f;
  block[5] ^= 0x10;
  Walked w = Walk(block, 10);
  EXPECT_EQ(w.good, Range(1, 10));
}

TEST(SpoolBlockTest, GarbageNeverCrashesAndProvesNothing) {
  std::string garbage;
  for (int i = 0; i < 5000; ++i) {
    garbage.push_back(static_cast<char>((i * 7919) ^ (i >> 3)));
  }
  for (size_t size : {0, 1, 8, 9, 13, 40, 500, 5000}) {
    Walked w = Walk(garbage.substr(0, size), 1000);
    EXPECT_TRUE(w.good.empty()) << size;
  }
  // A valid block truncated anywhere: whatever is passed on is either
  // proven or a record whose bytes fail their check; nothing crashes.
  const std::string block = Block(1, 10);
  for (size_t cut = 0; cut < block.size(); cut += 7) {
    Walked w = Walk(block.substr(0, cut), 10);
    for (uint64_t s : w.good) EXPECT_LE(s, 10u);
  }
}

TEST(SpoolBlockTest, AStoredRecordOfTheOldFormatBecomesAOneRecordBlock) {
  EncodedRecord r = EncodeRecord({.topic = "t", .value = "v"}, 5, "");
  Seal(r, 77);
  Walked w = Walk(BlockOfStored(77, r.stored), 77);
  EXPECT_EQ(w.good, std::vector<uint64_t>{77});
  // Damaged bytes are kept as they were: still damaged.
  r.stored[10] ^= 1;
  w = Walk(BlockOfStored(77, r.stored), 77);
  EXPECT_TRUE(w.good.empty());
  EXPECT_EQ(w.bad, std::vector<uint64_t>{77});
}

}  // namespace
}  // namespace exactly::internal::spool
