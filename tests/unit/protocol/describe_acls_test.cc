#include "protocol/messages/describe_acls.h"

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

DescribeAclsRequest MakeRequest(int16_t v) {
  DescribeAclsRequest r;
  r.resource_type_filter = 2;  // topic
  r.resource_name_filter = "wire-admin-a";
  if (In(v, 1)) r.pattern_type_filter = 4;  // prefixed
  r.principal_filter = "User:alice";
  r.host_filter = std::nullopt;
  r.operation = 3;        // read
  r.permission_type = 3;  // allow
  return r;
}

DescribeAclsResponse MakeResponse(int16_t v) {
  DescribeAclsResponse r;
  r.throttle_time_ms = 1;
  r.error_code = 0;
  DescribeAclsResponse::Resource topic;
  topic.resource_type = 2;
  topic.resource_name = "wire-admin-a";
  if (In(v, 1)) topic.pattern_type = 4;
  topic.acls = {{"User:alice", "*", 3, 3, {}},
                {"User:bob", "10.0.0.1", 4, 2, {}}};
  r.resources = {topic};
  return r;
}

TEST(DescribeAclsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(DescribeAclsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(DescribeAclsTest, NonFlexibleLayout) {
  DescribeAclsRequest r;
  r.resource_type_filter = 2;
  r.operation = 1;
  r.permission_type = 1;
  // Null name, principal and host filters are int16 -1.
  EXPECT_EQ(EncodeMessage(r, 0), Hex("02 ffff ffff ffff 01 01"));
  // v1 adds the pattern type (LITERAL by default) after the name.
  EXPECT_EQ(EncodeMessage(r, 1), Hex("02 ffff 03 ffff ffff 01 01"));

  DescribeAclsResponse resp;
  resp.resources = {
      {2, "t", kAclPatternLiteral, {{"User:alice", "*", 3, 3, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 0),
            Hex("00000000 0000 ffff 00000001 02 0001 74 00000001 000a "
                "557365723a616c696365 0001 2a 03 03"));
}

TEST(DescribeAclsTest, FlexibleLayout) {
  DescribeAclsRequest r;
  r.resource_type_filter = 2;
  r.operation = 1;
  r.permission_type = 1;
  EXPECT_EQ(EncodeMessage(r, 2), Hex("02 00 03 00 00 01 01 00"));

  DescribeAclsResponse resp;
  resp.resources = {
      {2, "t", kAclPatternLiteral, {{"User:alice", "*", 3, 3, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 2),
            Hex("00000000 0000 00 02 02 0274 03 02 0b 557365723a616c696365 "
                "022a 03 03 00 00 00"));
}

TEST(DescribeAclsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kDescribeAcls);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<DescribeAclsRequest>(captured);

  for (const char* file : {"librdkafka-2.0.2-describe_acls-v1-1.bin",
                           "kafka-python-2.0.2-describe_acls-v1-1.bin"}) {
    SCOPED_TRACE(file);
    DescribeAclsRequest r = DecodeCaptured<DescribeAclsRequest>(captured, file);
    EXPECT_EQ(r.resource_type_filter, 2);
    EXPECT_EQ(r.resource_name_filter, std::nullopt);
    EXPECT_EQ(r.pattern_type_filter, 1);
    EXPECT_EQ(r.principal_filter, std::nullopt);
    EXPECT_EQ(r.operation, 1);
    EXPECT_EQ(r.permission_type, 1);
  }
}

}  // namespace
}  // namespace exactly::protocol
