#include "protocol/messages/heartbeat.h"

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

HeartbeatRequest MakeRequest(int16_t v) {
  HeartbeatRequest r;
  r.group_id = "wire-group";
  r.generation_id = 2;
  r.member_id = "member-1";
  if (In(v, 3)) r.group_instance_id = "instance-1";
  return r;
}

HeartbeatResponse MakeResponse(int16_t v) {
  HeartbeatResponse r;
  if (In(v, 1)) r.throttle_time_ms = 3;
  r.error_code = 22;  // ILLEGAL_GENERATION
  return r;
}

TEST(HeartbeatTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 4; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(HeartbeatTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 4; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(HeartbeatTest, NonFlexibleLayout) {
  HeartbeatRequest r;
  r.group_id = "g";
  r.generation_id = 2;
  r.member_id = "m";
  EXPECT_EQ(EncodeMessage(r, 0), Hex("0001 67 00000002 0001 6d"));
  EXPECT_EQ(EncodeMessage(r, 3), Hex("0001 67 00000002 0001 6d ffff"));

  HeartbeatResponse resp;
  resp.error_code = 27;
  EXPECT_EQ(EncodeMessage(resp, 0), Hex("001b"));
  EXPECT_EQ(EncodeMessage(resp, 1), Hex("00000000 001b"));
}

TEST(HeartbeatTest, FlexibleLayout) {
  HeartbeatRequest r;
  r.group_id = "g";
  r.generation_id = 2;
  r.member_id = "m";
  r.group_instance_id = "i";
  EXPECT_EQ(EncodeMessage(r, 4), Hex("02 67 00000002 02 6d 02 69 00"));

  HeartbeatResponse resp;
  resp.throttle_time_ms = 1;
  EXPECT_EQ(EncodeMessage(resp, 4), Hex("00000001 0000 00"));
}

TEST(HeartbeatTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured = CapturedRequests(ApiKey::kHeartbeat);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<HeartbeatRequest>(captured);

  HeartbeatRequest v3 = DecodeCaptured<HeartbeatRequest>(
      captured, "librdkafka-2.0.2-heartbeat-v3-1.bin");
  EXPECT_EQ(v3.group_id, "wire-txn-group");
  EXPECT_EQ(v3.member_id, "0x7fbd74002e80");
  EXPECT_EQ(v3.generation_id, 2);
  EXPECT_EQ(v3.group_instance_id, std::nullopt);

  HeartbeatRequest v1 = DecodeCaptured<HeartbeatRequest>(
      captured, "kafka-python-2.0.2-heartbeat-v1-1.bin");
  EXPECT_EQ(v1.group_id, "wire-kp-group");
  EXPECT_EQ(v1.member_id, "0x7f90440041c0");
  EXPECT_EQ(v1.generation_id, 2);
}

}  // namespace
}  // namespace exactly::protocol
