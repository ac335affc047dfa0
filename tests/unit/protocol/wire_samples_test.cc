// Every captured request frame from librdkafka 2.0.2 and kafka-python 2.0.2
// must decode completely with our message structs and re-encode to the same
// bytes.
#include "support/wire_samples.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"

namespace exactly::protocol {
namespace {

using ::exactly::testing::LoadWireSamples;
using ::exactly::testing::WireSample;
using ::exactly::testing::WireSamplesDir;

// librdkafka before 2.1.0 wrote ListGroups v3+'s tagged fields twice (see the
// samples' README).
bool HasTrailingByteQuirk(const WireSample& s) {
  return s.file.find("list_groups-v4") != std::string::npos;
}

// Decodes the body with Request, re-encodes, and returns the re-encoded body
// (or an error).
template <class Request>
absl::StatusOr<std::string> RoundTrip(std::string_view body, int16_t version,
                                      bool trailing) {
  absl::StatusOr<Request> decoded =
      DecodeMessage<Request>(body, version, trailing);
  if (!decoded.ok()) return decoded.status();
  return EncodeMessage(*decoded, version);
}

std::set<int16_t> KeysWithMessages() {
  std::set<int16_t> keys;
  ForEachMessagePair([&]<class Req, class Resp>() {
    keys.insert(static_cast<int16_t>(Req::kApiKey));
  });
  return keys;
}

TEST(WireSamplesTest, EveryFrameOfAnImplementedApiRoundTripsByteForByte) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout; set "
                    "EXACTLY_WIRE_SAMPLES";
  }
  std::vector<WireSample> samples = LoadWireSamples();
  ASSERT_GT(samples.size(), 100u);
  std::set<int16_t> implemented = KeysWithMessages();
  int checked = 0;
  for (const WireSample& s : samples) {
    SCOPED_TRACE(s.file);
    ASSERT_GE(s.bytes.size(), kFrameSizePrefix);
    uint32_t size = (static_cast<uint8_t>(s.bytes[0]) << 24) |
                    (static_cast<uint8_t>(s.bytes[1]) << 16) |
                    (static_cast<uint8_t>(s.bytes[2]) << 8) |
                    static_cast<uint8_t>(s.bytes[3]);
    ASSERT_EQ(size, s.bytes.size() - kFrameSizePrefix);
    std::string_view request =
        std::string_view(s.bytes).substr(kFrameSizePrefix);
    absl::StatusOr<ParsedRequest> parsed = ParseRequest(request);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->header.api_key, s.api_key);
    EXPECT_EQ(parsed->header.api_version, s.api_version);
    EXPECT_EQ(parsed->header.flexible(), s.flexible);
    if (!implemented.count(s.api_key)) continue;
    bool trailing = HasTrailingByteQuirk(s);
    absl::StatusOr<std::string> body;
    ForEachMessagePair([&]<class Req, class Resp>() {
      if (static_cast<int16_t>(Req::kApiKey) == s.api_key) {
        body = RoundTrip<Req>(parsed->body, s.api_version, trailing);
      }
    });
    ASSERT_TRUE(body.ok()) << body.status();
    // Re-encode the header too and compare the whole request.
    std::string reencoded;
    EncodeRequestHeader(parsed->header, &reencoded);
    reencoded += *body;
    if (trailing) {
      EXPECT_EQ(reencoded, request.substr(0, request.size() - 1));
    } else {
      EXPECT_EQ(reencoded, request);
    }
    ++checked;
  }
  // Every API a captured client sent has message structs.
  EXPECT_EQ(checked, static_cast<int>(samples.size()));
  std::printf("round-tripped %d of %zu captured frames\n", checked,
              samples.size());
}

}  // namespace
}  // namespace exactly::protocol
