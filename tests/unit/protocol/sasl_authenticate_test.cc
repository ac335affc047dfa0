#include "protocol/messages/sasl_authenticate.h"

#include <algorithm>
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
using ::exactly::protocol::testing::In;
using ::exactly::protocol::testing::kAllVersions;
using ::exactly::testing::WireSamplesDir;

SaslAuthenticateRequest MakeRequest(int16_t) {
  SaslAuthenticateRequest r;
  r.auth_bytes = std::string("\0user\0secret", 12);
  return r;
}

SaslAuthenticateResponse MakeResponse(int16_t v) {
  SaslAuthenticateResponse r;
  r.error_code = 58;  // SASL_AUTHENTICATION_FAILED
  r.error_message = "bad password";
  r.auth_bytes = "server-final";
  if (In(v, 1)) r.session_lifetime_ms = 3600000;
  return r;
}

TEST(SaslAuthenticateTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 2; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(SaslAuthenticateTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 2; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(SaslAuthenticateTest, NonFlexibleLayout) {
  SaslAuthenticateRequest r;
  r.auth_bytes = std::string("\0u\0p", 4);
  // Bytes have an int32 length.
  EXPECT_EQ(EncodeMessage(r, 0), Hex("00000004 00750070"));

  SaslAuthenticateResponse resp;
  EXPECT_EQ(EncodeMessage(resp, 0), Hex("0000 ffff 00000000"));
  EXPECT_EQ(EncodeMessage(resp, 1), Hex("0000 ffff 00000000 0000000000000000"));
}

TEST(SaslAuthenticateTest, FlexibleLayout) {
  SaslAuthenticateRequest r;
  r.auth_bytes = std::string("\0u\0p", 4);
  EXPECT_EQ(EncodeMessage(r, 2), Hex("05 00750070 00"));

  SaslAuthenticateResponse resp;
  EXPECT_EQ(EncodeMessage(resp, 2), Hex("0000 00 01 0000000000000000 00"));
}

TEST(SaslAuthenticateTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kSaslAuthenticate);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<SaslAuthenticateRequest>(captured);

  SaslAuthenticateRequest r = DecodeCaptured<SaslAuthenticateRequest>(
      captured, "librdkafka-2.0.2-sasl_authenticate-v0-1.bin");
  // A SASL/PLAIN token: authzid NUL authcid NUL password.
  EXPECT_EQ(r.auth_bytes.size(), 19u);
  EXPECT_EQ(std::count(r.auth_bytes.begin(), r.auth_bytes.end(), '\0'), 2);
}

}  // namespace
}  // namespace exactly::protocol
