#include "protocol/messages/describe_groups.h"

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

DescribeGroupsRequest MakeRequest(int16_t v) {
  DescribeGroupsRequest r;
  r.groups = {"wire-group", "wire-group-2"};
  if (In(v, 3)) r.include_authorized_operations = true;
  return r;
}

DescribeGroupsResponse MakeResponse(int16_t v) {
  DescribeGroupsResponse r;
  if (In(v, 1)) r.throttle_time_ms = 2;
  DescribeGroupsResponse::Member member;
  member.member_id = "member-1";
  if (In(v, 4)) member.group_instance_id = "instance-1";
  member.client_id = "rdkafka";
  member.client_host = "/127.0.0.1";
  member.member_metadata = std::string("\x00\x01", 2);
  member.member_assignment = std::string("\x00\x02", 2);
  DescribeGroupsResponse::Group stable;
  stable.group_id = "wire-group";
  stable.group_state = "Stable";
  stable.protocol_type = "consumer";
  stable.protocol_data = "range";
  stable.members = {member};
  if (In(v, 3)) stable.authorized_operations = 0x7f8;
  DescribeGroupsResponse::Group dead;
  dead.error_code = 16;  // NOT_COORDINATOR
  dead.group_id = "wire-group-2";
  dead.group_state = "Dead";
  r.groups = {stable, dead};
  return r;
}

TEST(DescribeGroupsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 5; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(DescribeGroupsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 5; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(DescribeGroupsTest, NonFlexibleLayout) {
  DescribeGroupsRequest r;
  r.groups = {"g"};
  r.include_authorized_operations = true;
  EXPECT_EQ(EncodeMessage(r, 0), Hex("00000001 0001 67"));
  EXPECT_EQ(EncodeMessage(r, 3), Hex("00000001 0001 67 01"));

  DescribeGroupsResponse resp;
  resp.groups.resize(1);
  resp.groups[0].group_id = "g";
  resp.groups[0].group_state = "S";
  // error, id, state, empty protocol type and data, no members.
  EXPECT_EQ(EncodeMessage(resp, 0),
            Hex("00000001 0000 0001 67 0001 53 0000 0000 00000000"));
  // v3 adds the authorized operations (INT32_MIN: not asked for).
  EXPECT_EQ(EncodeMessage(resp, 3),
            Hex("00000000 00000001 0000 0001 67 0001 53 0000 0000 00000000 "
                "80000000"));
}

TEST(DescribeGroupsTest, FlexibleLayout) {
  DescribeGroupsRequest r;
  r.groups = {"g"};
  r.include_authorized_operations = true;
  EXPECT_EQ(EncodeMessage(r, 5), Hex("02 0267 01 00"));

  DescribeGroupsResponse resp;
  resp.groups.resize(1);
  resp.groups[0].group_id = "g";
  resp.groups[0].group_state = "S";
  resp.groups[0].members.resize(1);
  resp.groups[0].members[0].member_id = "m";
  // The member: id, null instance id, empty client id/host/metadata/
  // assignment, tags. Then the group's operations and tags, and the end.
  EXPECT_EQ(EncodeMessage(resp, 5),
            Hex("00000000 02 0000 0267 0253 01 01 02 026d 00 01 01 01 01 00 "
                "80000000 00 00"));
}

TEST(DescribeGroupsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kDescribeGroups);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<DescribeGroupsRequest>(captured);

  DescribeGroupsRequest v4 = DecodeCaptured<DescribeGroupsRequest>(
      captured, "librdkafka-2.0.2-describe_groups-v4-2.bin");
  EXPECT_EQ(v4.groups, std::vector<std::string>{"wire-group-2"});

  DescribeGroupsRequest v3 = DecodeCaptured<DescribeGroupsRequest>(
      captured, "kafka-python-2.0.2-describe_groups-v3-1.bin");
  EXPECT_EQ(v3.groups, std::vector<std::string>{"wire-kp-group"});
}

}  // namespace
}  // namespace exactly::protocol
