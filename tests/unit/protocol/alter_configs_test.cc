#include "protocol/messages/alter_configs.h"

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

AlterConfigsRequest MakeRequest(int16_t) {
  AlterConfigsRequest r;
  r.resources = {
      {2,
       "wire-admin-a",
       {{"retention.ms", "1000", {}}, {"segment.bytes", std::nullopt, {}}},
       {}},
      {4, "1", {}, {}}};
  r.validate_only = true;
  return r;
}

AlterConfigsResponse MakeResponse(int16_t) {
  AlterConfigsResponse r;
  r.throttle_time_ms = 1;
  r.results = {{0, std::nullopt, 2, "wire-admin-a", {}},
               {40, "bad value", 4, "1", {}}};  // INVALID_CONFIG
  return r;
}

TEST(AlterConfigsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 2; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(AlterConfigsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 2; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(AlterConfigsTest, NonFlexibleLayout) {
  AlterConfigsRequest r;
  r.resources = {{2, "t", {{"k", "v", {}}}, {}}};
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("00000001 02 0001 74 00000001 0001 6b 0001 76 00"));

  AlterConfigsResponse resp;
  resp.results = {{0, std::nullopt, 2, "t", {}}};
  EXPECT_EQ(EncodeMessage(resp, 1),
            Hex("00000000 00000001 0000 ffff 02 0001 74"));
}

TEST(AlterConfigsTest, FlexibleLayout) {
  AlterConfigsRequest r;
  r.resources = {{2, "t", {{"k", "v", {}}}, {}}};
  EXPECT_EQ(EncodeMessage(r, 2), Hex("02 02 0274 02 026b 0276 00 00 00 00"));

  AlterConfigsResponse resp;
  resp.results = {{0, std::nullopt, 2, "t", {}}};
  EXPECT_EQ(EncodeMessage(resp, 2), Hex("00000000 02 0000 00 02 0274 00 00"));
}

TEST(AlterConfigsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kAlterConfigs);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<AlterConfigsRequest>(captured);

  AlterConfigsRequest v0 = DecodeCaptured<AlterConfigsRequest>(
      captured, "librdkafka-2.0.2-alter_configs-v0-1.bin");
  EXPECT_FALSE(v0.validate_only);
  ASSERT_EQ(v0.resources.size(), 1u);
  EXPECT_EQ(v0.resources[0].resource_type, 2);
  EXPECT_EQ(v0.resources[0].resource_name, "wire-admin-a");
  ASSERT_EQ(v0.resources[0].configs.size(), 2u);
  EXPECT_EQ(v0.resources[0].configs[0].name, "retention.ms");
  EXPECT_EQ(v0.resources[0].configs[1].name, "segment.bytes");

  AlterConfigsRequest v1 = DecodeCaptured<AlterConfigsRequest>(
      captured, "kafka-python-2.0.2-alter_configs-v1-1.bin");
  ASSERT_EQ(v1.resources.size(), 1u);
  EXPECT_EQ(v1.resources[0].resource_name, "wire-kp-admin-a");
  ASSERT_EQ(v1.resources[0].configs.size(), 1u);
  EXPECT_EQ(v1.resources[0].configs[0].name, "retention.ms");
}

}  // namespace
}  // namespace exactly::protocol
