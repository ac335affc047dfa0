// CRC-32C (common/crc32c) against published vectors (RFC 3720, appendix B.4),
// Extend's composability, and every implementation (the table, the SSE4.2
// instruction over one stream and over three) against the others.
#include "crc32c/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::crc32c {
namespace {

using ExtendFn = uint32_t (*)(uint32_t, const void*, size_t);

struct Named {
  const char* name;
  ExtendFn extend;
};

// Extend() itself (whatever it chose) and each implementation.
const std::vector<Named>& Implementations() {
  static const std::vector<Named> all = {
      {"Extend", [](uint32_t crc, const void* data,
                    size_t n) { return Extend(crc, data, n); }},
      {"ExtendPortable", &ExtendPortable},
      {"ExtendHardware1", &ExtendHardware1},
      {"ExtendHardware3", &ExtendHardware3},
  };
  return all;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  std::string data(n, '\0');
  for (char& c : data) c = static_cast<char>(random());
  return data;
}

uint32_t ValueWith(ExtendFn extend, std::string_view data) {
  return extend(0, data.data(), data.size());
}

TEST(Crc32cTest, KnownVectors) {
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  for (const Named& impl : Implementations()) {
    SCOPED_TRACE(impl.name);
    EXPECT_EQ(ValueWith(impl.extend, ""), 0u);
    EXPECT_EQ(ValueWith(impl.extend, "123456789"), 0xE3069283u);
    EXPECT_EQ(ValueWith(impl.extend, std::string(32, '\0')), 0x8A9136AAu);
    EXPECT_EQ(ValueWith(impl.extend, std::string(32, '\xff')), 0x62A8AB43u);
    EXPECT_EQ(ValueWith(impl.extend, ascending), 0x46DD794Eu);
    EXPECT_EQ(ValueWith(impl.extend, descending), 0x113FDB5Cu);
  }
  EXPECT_EQ(Value(""), 0u);
  EXPECT_EQ(Value("123456789"), 0xE3069283u);
  EXPECT_EQ(Extend(0, std::string_view("123456789")), 0xE3069283u);
}

TEST(Crc32cTest, ExtendEqualsValueOfTheConcatenation) {
  const std::string a = "exactly-once ", b = "delivery";
  EXPECT_EQ(Extend(Value(a), b.data(), b.size()), Value(a + b));
  EXPECT_EQ(Extend(Value(a), b), Value(a + b));
  EXPECT_EQ(Extend(0, a.data(), 0), 0u);
  EXPECT_EQ(Extend(0x12345678, a.data(), 0), 0x12345678u);
}

// Cut anywhere, a message's CRC extended piece by piece equals its Value, with
// each implementation (the three-stream path on both sides of its 3 KiB and
// 768 B blocks).
TEST(Crc32cTest, ExtendingInPiecesEqualsOnePass) {
  const std::string data = RandomBytes(10000, 1);
  const uint32_t whole = ExtendPortable(0, data.data(), data.size());
  for (const Named& impl : Implementations()) {
    SCOPED_TRACE(impl.name);
    for (size_t cut = 0; cut <= data.size(); cut += 37) {
      const uint32_t head = impl.extend(0, data.data(), cut);
      EXPECT_EQ(impl.extend(head, data.data() + cut, data.size() - cut), whole)
          << "cut at " << cut;
    }
    for (size_t piece : {1u, 5u, 8u, 1000u, 3071u, 3072u, 3073u}) {
      uint32_t crc = 0;
      for (size_t i = 0; i < data.size(); i += piece) {
        crc =
            impl.extend(crc, data.data() + i, std::min(piece, data.size() - i));
      }
      EXPECT_EQ(crc, whole) << "pieces of " << piece;
    }
  }
}

// Every length from 0 to 10,000 at a random unaligned offset and a random
// starting CRC, then a few large inputs: all implementations agree.
TEST(Crc32cTest, ImplementationsAgreeOnEveryLengthAndAlignment) {
  if (!HardwareAvailable()) {
    std::printf("(no SSE4.2 here: the hardware functions are the table)\n");
  }
  const std::string data = RandomBytes(10000 + 64, 2);
  std::mt19937 random(3);
  for (size_t n = 0; n <= 10000; ++n) {
    const size_t offset = random() % 64;
    const uint32_t start = static_cast<uint32_t>(random());
    const char* p = data.data() + offset;
    const uint32_t want = ExtendPortable(start, p, n);
    ASSERT_EQ(ExtendHardware1(start, p, n), want)
        << "length " << n << " offset " << offset;
    ASSERT_EQ(ExtendHardware3(start, p, n), want)
        << "length " << n << " offset " << offset;
    ASSERT_EQ(Extend(start, p, n), want)
        << "length " << n << " offset " << offset;
  }
  const std::string big = RandomBytes((size_t{4} << 20) + 64, 4);
  for (size_t n :
       {size_t{3} * 1024 * 7, size_t{3} * 1024 * 7 + 1, (size_t{1} << 20) - 1,
        size_t{1} << 20, (size_t{4} << 20) + 13}) {
    for (size_t offset : {0u, 3u, 17u, 51u}) {
      const char* p = big.data() + offset;
      const uint32_t want = ExtendPortable(0xFFFFFFFF, p, n);
      EXPECT_EQ(ExtendHardware1(0xFFFFFFFF, p, n), want) << n << " " << offset;
      EXPECT_EQ(ExtendHardware3(0xFFFFFFFF, p, n), want) << n << " " << offset;
      EXPECT_EQ(Extend(0xFFFFFFFF, p, n), want) << n << " " << offset;
    }
  }
}

TEST(Crc32cTest, ABenchmarkCanForceThePortableImplementation) {
  const std::string data = RandomBytes(5000, 5);
  const uint32_t want = Value(data);
  EXPECT_EQ(UsesHardware(), HardwareAvailable());
  ForceImplementationForBenchmark(Implementation::kPortable);
  EXPECT_FALSE(UsesHardware());
  EXPECT_EQ(Value(data), want);
  ForceImplementationForBenchmark(Implementation::kAuto);
  EXPECT_EQ(UsesHardware(), HardwareAvailable());
  EXPECT_EQ(Value(data), want);
}

}  // namespace
}  // namespace exactly::crc32c
