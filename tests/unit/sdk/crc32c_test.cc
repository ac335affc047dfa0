// CRC-32C against published vectors (RFC 3720, appendix B.4) and the
// hardware path against the table path.
#include "crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace exactly::internal::crc32c {
namespace {

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Value(""), 0u);
  EXPECT_EQ(Value("123456789"), 0xE3069283u);
  EXPECT_EQ(Value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Value(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Value(ascending), 0x46DD794Eu);
  EXPECT_EQ(Value(descending), 0x113FDB5Cu);
}

TEST(Crc32cTest, ExtendEqualsValueOfTheConcatenation) {
  const std::string a = "exactly-once ", b = "delivery";
  EXPECT_EQ(Extend(Value(a), b.data(), b.size()), Value(a + b));
  EXPECT_EQ(Extend(0, a.data(), 0), 0u);
}

TEST(Crc32cTest, HardwareAndTableAgreeOnEveryLengthAndAlignment) {
  std::mt19937 random(7);
  std::string data(4096 + 16, '\0');
  for (char& c : data) c = static_cast<char>(random());
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 100u, 1000u, 4096u}) {
      EXPECT_EQ(Extend(0x12345678, data.data() + offset, n),
                ExtendPortable(0x12345678, data.data() + offset, n))
          << "offset " << offset << " length " << n;
    }
  }
  EXPECT_EQ(ExtendPortable(0, "123456789", 9), 0xE3069283u);
}

}  // namespace
}  // namespace exactly::internal::crc32c
