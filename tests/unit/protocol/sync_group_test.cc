#include "protocol/messages/sync_group.h"

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

SyncGroupRequest MakeRequest(int16_t v) {
  SyncGroupRequest r;
  r.group_id = "wire-group";
  r.generation_id = 2;
  r.member_id = "member-1";
  if (In(v, 3)) r.group_instance_id = "instance-1";
  if (In(v, 5)) {
    r.protocol_type = "consumer";
    r.protocol_name = "range";
  }
  r.assignments = {{"member-1", "assign-1", {}}, {"member-2", "", {}}};
  return r;
}

SyncGroupResponse MakeResponse(int16_t v) {
  SyncGroupResponse r;
  if (In(v, 1)) r.throttle_time_ms = 9;
  r.error_code = 27;  // REBALANCE_IN_PROGRESS
  if (In(v, 5)) {
    r.protocol_type = "consumer";
    r.protocol_name = "range";
  }
  r.assignment = std::string("\x00\x01\x00", 3);
  return r;
}

TEST(SyncGroupTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 5; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(SyncGroupTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 5; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(SyncGroupTest, NonFlexibleLayout) {
  SyncGroupRequest r;
  r.group_id = "g";
  r.generation_id = 1;
  r.member_id = "m";
  r.assignments = {{"m", "\x01", {}}};
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("0001 67 00000001 0001 6d 00000001 0001 6d 00000001 01"));
  // v3 adds a null group instance id (int16 -1) after the member id.
  EXPECT_EQ(EncodeMessage(r, 3),
            Hex("0001 67 00000001 0001 6d ffff 00000001 0001 6d 00000001 01"));

  SyncGroupResponse resp;
  resp.assignment = "\x01";
  EXPECT_EQ(EncodeMessage(resp, 0), Hex("0000 00000001 01"));
}

TEST(SyncGroupTest, FlexibleLayout) {
  SyncGroupRequest r;
  r.group_id = "g";
  r.generation_id = 1;
  r.member_id = "m";
  r.assignments = {{"m", "\x01", {}}};
  EXPECT_EQ(EncodeMessage(r, 4),
            Hex("02 67 00000001 02 6d 00 02 026d 0201 00 00"));
  // v5 adds null protocol type and name after the instance id.
  EXPECT_EQ(EncodeMessage(r, 5),
            Hex("02 67 00000001 02 6d 00 00 00 02 026d 0201 00 00"));

  SyncGroupResponse resp;
  resp.assignment = "\x01";
  EXPECT_EQ(EncodeMessage(resp, 4), Hex("00000000 0000 0201 00"));
}

TEST(SyncGroupTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured = CapturedRequests(ApiKey::kSyncGroup);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<SyncGroupRequest>(captured);

  SyncGroupRequest v3 = DecodeCaptured<SyncGroupRequest>(
      captured, "librdkafka-2.0.2-sync_group-v3-1.bin");
  EXPECT_EQ(v3.group_id, "wire-txn-group");
  EXPECT_EQ(v3.generation_id, 2);
  EXPECT_EQ(v3.group_instance_id, std::nullopt);
  ASSERT_EQ(v3.assignments.size(), 1u);
  // The leader assigns to itself.
  EXPECT_EQ(v3.assignments[0].member_id, v3.member_id);
  EXPECT_FALSE(v3.assignments[0].assignment.empty());

  SyncGroupRequest v1 = DecodeCaptured<SyncGroupRequest>(
      captured, "kafka-python-2.0.2-sync_group-v1-1.bin");
  EXPECT_EQ(v1.group_id, "wire-kp-group");
  EXPECT_EQ(v1.generation_id, 2);
  EXPECT_EQ(v1.assignments.size(), 1u);
}

}  // namespace
}  // namespace exactly::protocol
