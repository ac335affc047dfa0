#include "protocol/messages/delete_acls.h"

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

DeleteAclsRequest MakeRequest(int16_t v) {
  DeleteAclsRequest r;
  DeleteAclsRequest::Filter f;
  f.resource_type_filter = 2;
  f.resource_name_filter = "wire-admin-a";
  if (In(v, 1)) f.pattern_type_filter = 2;  // match
  f.principal_filter = "User:alice";
  f.operation = 1;
  f.permission_type = 1;
  DeleteAclsRequest::Filter any;
  any.resource_type_filter = 1;
  if (In(v, 1)) any.pattern_type_filter = 1;
  any.host_filter = "*";
  any.operation = 1;
  any.permission_type = 1;
  r.filters = {f, any};
  return r;
}

DeleteAclsResponse MakeResponse(int16_t v) {
  DeleteAclsResponse r;
  r.throttle_time_ms = 2;
  DeleteAclsResponse::MatchingAcl acl;
  acl.resource_type = 2;
  acl.resource_name = "wire-admin-a";
  if (In(v, 1)) acl.pattern_type = 4;
  acl.principal = "User:alice";
  acl.host = "*";
  acl.operation = 3;
  acl.permission_type = 3;
  r.filter_results = {{0, std::nullopt, {acl}, {}},
                      {54, "security disabled", {}, {}}};
  return r;
}

TEST(DeleteAclsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(DeleteAclsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

DeleteAclsRequest TinyRequest() {
  DeleteAclsRequest r;
  DeleteAclsRequest::Filter f;
  f.resource_type_filter = 2;
  f.resource_name_filter = "t";
  f.principal_filter = "User:alice";
  f.operation = 1;
  f.permission_type = 1;
  r.filters = {f};
  return r;
}

DeleteAclsResponse TinyResponse() {
  DeleteAclsResponse r;
  DeleteAclsResponse::MatchingAcl acl;
  acl.resource_type = 2;
  acl.resource_name = "t";
  acl.principal = "User:alice";
  acl.host = "*";
  acl.operation = 3;
  acl.permission_type = 3;
  r.filter_results = {{0, std::nullopt, {acl}, {}}};
  return r;
}

TEST(DeleteAclsTest, NonFlexibleLayout) {
  EXPECT_EQ(EncodeMessage(TinyRequest(), 0),
            Hex("00000001 02 0001 74 000a 557365723a616c696365 ffff 01 01"));
  EXPECT_EQ(EncodeMessage(TinyResponse(), 0),
            Hex("00000000 00000001 0000 ffff 00000001 0000 ffff 02 0001 74 "
                "000a 557365723a616c696365 0001 2a 03 03"));
  // v1 adds the pattern types after the resource names.
  EXPECT_EQ(EncodeMessage(TinyResponse(), 1),
            Hex("00000000 00000001 0000 ffff 00000001 0000 ffff 02 0001 74 03 "
                "000a 557365723a616c696365 0001 2a 03 03"));
}

TEST(DeleteAclsTest, FlexibleLayout) {
  EXPECT_EQ(EncodeMessage(TinyRequest(), 2),
            Hex("02 02 0274 03 0b 557365723a616c696365 00 01 01 00 00"));
  EXPECT_EQ(EncodeMessage(TinyResponse(), 2),
            Hex("00000000 02 0000 00 02 0000 00 02 0274 03 0b "
                "557365723a616c696365 022a 03 03 00 00 00"));
}

TEST(DeleteAclsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured = CapturedRequests(ApiKey::kDeleteAcls);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<DeleteAclsRequest>(captured);

  DeleteAclsRequest r = DecodeCaptured<DeleteAclsRequest>(
      captured, "librdkafka-2.0.2-delete_acls-v1-1.bin");
  ASSERT_EQ(r.filters.size(), 1u);
  EXPECT_EQ(r.filters[0].resource_type_filter, 2);
  EXPECT_EQ(r.filters[0].resource_name_filter, "wire-admin-a");
  EXPECT_EQ(r.filters[0].pattern_type_filter, 2);
  EXPECT_EQ(r.filters[0].principal_filter, "User:alice");
  EXPECT_EQ(r.filters[0].operation, 1);
  EXPECT_EQ(r.filters[0].permission_type, 1);

  DeleteAclsRequest kp = DecodeCaptured<DeleteAclsRequest>(
      captured, "kafka-python-2.0.2-delete_acls-v1-1.bin");
  ASSERT_EQ(kp.filters.size(), 1u);
  EXPECT_EQ(kp.filters[0].resource_name_filter, "wire-kp-admin-a");
  EXPECT_EQ(kp.filters[0].pattern_type_filter, kAclPatternLiteral);
}

}  // namespace
}  // namespace exactly::protocol
