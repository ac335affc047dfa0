#include "protocol/messages/sasl_handshake.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "unit/protocol/message_test_util.h"

namespace exactly::protocol {
namespace {

using ::exactly::protocol::testing::CapturedRequest;
using ::exactly::protocol::testing::CapturedRequests;
using ::exactly::protocol::testing::DecodeCaptured;
using ::exactly::protocol::testing::ExpectEveryCapturedRoundTrips;
using ::exactly::protocol::testing::ExpectRoundTrip;
using ::exactly::protocol::testing::ExpectTruncationFails;
using ::exactly::protocol::testing::Hex;
using ::exactly::protocol::testing::kAllVersions;
using ::exactly::testing::WireSamplesDir;

SaslHandshakeRequest MakeRequest(int16_t) {
  SaslHandshakeRequest r;
  r.mechanism = "SCRAM-SHA-256";
  return r;
}

SaslHandshakeResponse MakeResponse(int16_t) {
  SaslHandshakeResponse r;
  r.error_code = 33;  // UNSUPPORTED_SASL_MECHANISM
  r.mechanisms = {"PLAIN", "SCRAM-SHA-512"};
  return r;
}

TEST(SaslHandshakeTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 1; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(SaslHandshakeTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 1; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(SaslHandshakeTest, NonFlexibleLayout) {
  // Never flexible: v0 and v1 are the same bytes.
  EXPECT_FALSE(IsFlexible(ApiKey::kSaslHandshake, 1));
  SaslHandshakeRequest r;
  r.mechanism = "PLAIN";
  EXPECT_EQ(EncodeMessage(r, 0), Hex("0005 504c41494e"));
  EXPECT_EQ(EncodeMessage(r, 1), Hex("0005 504c41494e"));

  SaslHandshakeResponse resp;
  resp.mechanisms = {"PLAIN"};
  EXPECT_EQ(EncodeMessage(resp, 1), Hex("0000 00000001 0005 504c41494e"));
}

TEST(SaslHandshakeTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kSaslHandshake);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<SaslHandshakeRequest>(captured);

  SaslHandshakeRequest r = DecodeCaptured<SaslHandshakeRequest>(
      captured, "librdkafka-2.0.2-sasl_handshake-v1-1.bin");
  EXPECT_EQ(r.mechanism, "PLAIN");
}

}  // namespace
}  // namespace exactly::protocol
