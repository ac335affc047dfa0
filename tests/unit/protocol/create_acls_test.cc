#include "protocol/messages/create_acls.h"

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

CreateAclsRequest MakeRequest(int16_t v) {
  CreateAclsRequest r;
  CreateAclsRequest::Creation c;
  c.resource_type = 2;
  c.resource_name = "wire-admin-a";
  if (In(v, 1)) c.resource_pattern_type = 4;
  c.principal = "User:alice";
  c.host = "*";
  c.operation = 3;
  c.permission_type = 3;
  CreateAclsRequest::Creation group = c;
  group.resource_type = 3;
  group.resource_name = "wire-group";
  r.creations = {c, group};
  return r;
}

CreateAclsResponse MakeResponse(int16_t) {
  CreateAclsResponse r;
  r.throttle_time_ms = 2;
  r.results = {{0, std::nullopt, {}}, {42, "bad principal", {}}};
  return r;
}

TEST(CreateAclsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(CreateAclsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

CreateAclsRequest TinyRequest() {
  CreateAclsRequest r;
  r.creations = {{2, "t", kAclPatternLiteral, "User:alice", "*", 3, 3, {}}};
  return r;
}

TEST(CreateAclsTest, NonFlexibleLayout) {
  EXPECT_EQ(EncodeMessage(TinyRequest(), 0),
            Hex("00000001 02 0001 74 000a 557365723a616c696365 0001 2a 03 03"));
  EXPECT_EQ(EncodeMessage(TinyRequest(), 1),
            Hex("00000001 02 0001 74 03 000a 557365723a616c696365 0001 2a 03 "
                "03"));

  CreateAclsResponse resp;
  resp.results = {{0, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(resp, 1), Hex("00000000 00000001 0000 ffff"));
}

TEST(CreateAclsTest, FlexibleLayout) {
  EXPECT_EQ(EncodeMessage(TinyRequest(), 2),
            Hex("02 02 0274 03 0b 557365723a616c696365 022a 03 03 00 00"));

  CreateAclsResponse resp;
  resp.results = {{0, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(resp, 2), Hex("00000000 02 0000 00 00 00"));
}

TEST(CreateAclsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured = CapturedRequests(ApiKey::kCreateAcls);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<CreateAclsRequest>(captured);

  CreateAclsRequest r = DecodeCaptured<CreateAclsRequest>(
      captured, "librdkafka-2.0.2-create_acls-v1-1.bin");
  ASSERT_EQ(r.creations.size(), 1u);
  EXPECT_EQ(r.creations[0].resource_type, 2);
  EXPECT_EQ(r.creations[0].resource_name, "wire-admin-a");
  EXPECT_EQ(r.creations[0].resource_pattern_type, kAclPatternLiteral);
  EXPECT_EQ(r.creations[0].principal, "User:alice");
  EXPECT_EQ(r.creations[0].operation, 3);
  EXPECT_EQ(r.creations[0].permission_type, 3);

  CreateAclsRequest kp = DecodeCaptured<CreateAclsRequest>(
      captured, "kafka-python-2.0.2-create_acls-v1-1.bin");
  ASSERT_EQ(kp.creations.size(), 1u);
  EXPECT_EQ(kp.creations[0].resource_name, "wire-kp-admin-a");
}

}  // namespace
}  // namespace exactly::protocol
