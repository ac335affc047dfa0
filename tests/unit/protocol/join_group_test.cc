#include "protocol/messages/join_group.h"

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

JoinGroupRequest MakeRequest(int16_t v) {
  JoinGroupRequest r;
  r.group_id = "wire-group";
  r.session_timeout_ms = 45000;
  if (In(v, 1)) r.rebalance_timeout_ms = 300000;
  r.member_id = "member-1";
  if (In(v, 5)) r.group_instance_id = "instance-1";
  r.protocol_type = "consumer";
  r.protocols = {{"range", std::string("\x00\x01\xff", 3), {}},
                 {"roundrobin", "", {}}};
  if (In(v, 8)) r.reason = "rebalance please";
  return r;
}

JoinGroupResponse MakeResponse(int16_t v) {
  JoinGroupResponse r;
  if (In(v, 2)) r.throttle_time_ms = 5;
  r.error_code = 0;
  r.generation_id = 3;
  if (In(v, 7)) r.protocol_type = "consumer";
  r.protocol_name = "range";
  r.leader = "member-1";
  if (In(v, 9)) r.skip_assignment = true;
  r.member_id = "member-1";
  r.members = {{"member-1", std::nullopt, "meta-1", {}},
               {"member-2", std::nullopt, "", {}}};
  if (In(v, 5)) r.members[1].group_instance_id = "instance-2";
  return r;
}

TEST(JoinGroupTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 9; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(JoinGroupTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 9; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(JoinGroupTest, NonFlexibleLayout) {
  JoinGroupRequest r;
  r.group_id = "g";
  r.session_timeout_ms = 30000;
  r.protocol_type = "c";
  r.protocols = {{"r", "\x01", {}}};
  // group, session timeout, empty member id, protocol type, one protocol with
  // an int32-length metadata.
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("0001 67 00007530 0000 0001 63 00000001 0001 72 00000001 01"));
  // v1 adds the rebalance timeout after the session timeout.
  EXPECT_EQ(EncodeMessage(r, 1), Hex("0001 67 00007530 ffffffff 0000 0001 63 "
                                     "00000001 0001 72 00000001 01"));

  JoinGroupResponse resp;
  resp.generation_id = 1;
  resp.protocol_name = "r";
  resp.leader = "m";
  resp.member_id = "m";
  EXPECT_EQ(EncodeMessage(resp, 0),
            Hex("0000 00000001 0001 72 0001 6d 0001 6d 00000000"));
}

TEST(JoinGroupTest, FlexibleLayout) {
  JoinGroupRequest r;
  r.group_id = "g";
  r.session_timeout_ms = 30000;
  r.rebalance_timeout_ms = 60000;
  r.protocol_type = "c";
  r.protocols = {{"r", "\x01", {}}};
  // Compact strings and bytes; null instance id is 00; tags after the
  // protocol and at the end.
  EXPECT_EQ(EncodeMessage(r, 6),
            Hex("02 67 00007530 0000ea60 01 00 02 63 02 0272 0201 00 00"));
  // v8 adds a null reason before the final tags.
  EXPECT_EQ(EncodeMessage(r, 8),
            Hex("02 67 00007530 0000ea60 01 00 02 63 02 0272 0201 00 00 00"));
}

TEST(JoinGroupTest, ProtocolNameIsNullableOnlyFromV7) {
  JoinGroupResponse resp;  // protocol_name null, as after an error
  resp.error_code = 79;    // MEMBER_ID_REQUIRED
  // v6: throttle, error, generation, then "" in place of null.
  EXPECT_EQ(EncodeMessage(resp, 6),
            Hex("00000000 004f ffffffff 01 01 01 01 00"));
  // v7: null protocol type, then a real null name.
  EXPECT_EQ(EncodeMessage(resp, 7),
            Hex("00000000 004f ffffffff 00 00 01 01 01 00"));
  absl::StatusOr<JoinGroupResponse> v7 =
      DecodeMessage<JoinGroupResponse>(EncodeMessage(resp, 7), 7);
  ASSERT_TRUE(v7.ok()) << v7.status();
  EXPECT_FALSE(v7->protocol_name.has_value());
  absl::StatusOr<JoinGroupResponse> v6 =
      DecodeMessage<JoinGroupResponse>(EncodeMessage(resp, 6), 6);
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->protocol_name, "");

  // A null name on the wire is malformed before v7.
  absl::StatusOr<JoinGroupResponse> bad = DecodeMessage<JoinGroupResponse>(
      Hex("0000 00000001 ffff 0001 6d 0001 6d 00000000"), 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("null where a string is required"));
}

TEST(JoinGroupTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured = CapturedRequests(ApiKey::kJoinGroup);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<JoinGroupRequest>(captured);

  JoinGroupRequest v5 = DecodeCaptured<JoinGroupRequest>(
      captured, "librdkafka-2.0.2-join_group-v5-1.bin");
  EXPECT_EQ(v5.group_id, "wire-txn-group");
  EXPECT_EQ(v5.member_id, "");
  EXPECT_EQ(v5.group_instance_id, std::nullopt);
  EXPECT_EQ(v5.protocol_type, "consumer");
  ASSERT_EQ(v5.protocols.size(), 2u);
  EXPECT_EQ(v5.protocols[0].name, "range");
  EXPECT_EQ(v5.protocols[1].name, "roundrobin");

  JoinGroupRequest v2 = DecodeCaptured<JoinGroupRequest>(
      captured, "kafka-python-2.0.2-join_group-v2-1.bin");
  EXPECT_EQ(v2.group_id, "wire-kp-group");
  EXPECT_EQ(v2.protocol_type, "consumer");
  ASSERT_EQ(v2.protocols.size(), 2u);
  EXPECT_EQ(v2.protocols[0].name, "range");
}

}  // namespace
}  // namespace exactly::protocol
