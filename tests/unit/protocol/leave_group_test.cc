#include "protocol/messages/leave_group.h"

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

LeaveGroupRequest MakeRequest(int16_t v) {
  LeaveGroupRequest r;
  r.group_id = "wire-group";
  if (In(v, 0, 2)) {
    r.member_id = "member-1";
  }
  if (In(v, 3)) {
    r.members = {{"member-1", std::nullopt, std::nullopt, {}},
                 {"member-2", "instance-2", std::nullopt, {}}};
    if (In(v, 5)) r.members[1].reason = "shutting down";
  }
  return r;
}

LeaveGroupResponse MakeResponse(int16_t v) {
  LeaveGroupResponse r;
  if (In(v, 1)) r.throttle_time_ms = 4;
  r.error_code = 0;
  if (In(v, 3)) {
    r.members = {{"member-1", std::nullopt, 0, {}},
                 {"member-2", "instance-2", 25, {}}};  // UNKNOWN_MEMBER_ID
  }
  return r;
}

TEST(LeaveGroupTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 5; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(LeaveGroupTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 5; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(LeaveGroupTest, NonFlexibleLayout) {
  LeaveGroupRequest r;
  r.group_id = "g";
  r.member_id = "m";
  EXPECT_EQ(EncodeMessage(r, 0), Hex("0001 67 0001 6d"));
  // v3 replaces the member id with an array of members.
  r.members = {{"m", std::nullopt, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(r, 3), Hex("0001 67 00000001 0001 6d ffff"));

  LeaveGroupResponse resp;
  resp.members = {{"m", std::nullopt, 0, {}}};
  EXPECT_EQ(EncodeMessage(resp, 0), Hex("0000"));
  EXPECT_EQ(EncodeMessage(resp, 3),
            Hex("00000000 0000 00000001 0001 6d ffff 0000"));
}

TEST(LeaveGroupTest, FlexibleLayout) {
  LeaveGroupRequest r;
  r.group_id = "g";
  r.members = {{"m", std::nullopt, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(r, 4), Hex("02 67 02 026d 00 00 00"));
  // v5 adds each member's (null) reason.
  EXPECT_EQ(EncodeMessage(r, 5), Hex("02 67 02 026d 00 00 00 00"));

  LeaveGroupResponse resp;
  resp.members = {{"m", std::nullopt, 0, {}}};
  EXPECT_EQ(EncodeMessage(resp, 4), Hex("00000000 0000 02 026d 00 0000 00 00"));
}

TEST(LeaveGroupTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured = CapturedRequests(ApiKey::kLeaveGroup);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<LeaveGroupRequest>(captured);

  LeaveGroupRequest v1 = DecodeCaptured<LeaveGroupRequest>(
      captured, "librdkafka-2.0.2-leave_group-v1-1.bin");
  EXPECT_EQ(v1.group_id, "wire-txn-group");
  EXPECT_EQ(v1.member_id, "0x7fbd74002e80");

  LeaveGroupRequest kp = DecodeCaptured<LeaveGroupRequest>(
      captured, "kafka-python-2.0.2-leave_group-v1-1.bin");
  EXPECT_EQ(kp.group_id, "wire-kp-group");
  EXPECT_EQ(kp.member_id, "0x7f90440041c0");
}

}  // namespace
}  // namespace exactly::protocol
