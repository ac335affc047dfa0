#include "protocol/messages/delete_groups.h"

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

DeleteGroupsRequest MakeRequest(int16_t) {
  DeleteGroupsRequest r;
  r.group_names = {"wire-group-old", "wire-group-2"};
  return r;
}

DeleteGroupsResponse MakeResponse(int16_t) {
  DeleteGroupsResponse r;
  r.throttle_time_ms = 1;
  r.results = {{"wire-group-old", 0, {}},
               {"wire-group-2", 68, {}}};  // NON_EMPTY_GROUP
  return r;
}

TEST(DeleteGroupsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 2; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(DeleteGroupsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 2; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(DeleteGroupsTest, NonFlexibleLayout) {
  DeleteGroupsRequest r;
  r.group_names = {"g"};
  EXPECT_EQ(EncodeMessage(r, 1), Hex("00000001 0001 67"));

  DeleteGroupsResponse resp;
  resp.results = {{"g", 69, {}}};
  EXPECT_EQ(EncodeMessage(resp, 0), Hex("00000000 00000001 0001 67 0045"));
}

TEST(DeleteGroupsTest, FlexibleLayout) {
  DeleteGroupsRequest r;
  r.group_names = {"g"};
  EXPECT_EQ(EncodeMessage(r, 2), Hex("02 0267 00"));

  DeleteGroupsResponse resp;
  resp.results = {{"g", 69, {}}};
  EXPECT_EQ(EncodeMessage(resp, 2), Hex("00000000 02 0267 0045 00 00"));
}

TEST(DeleteGroupsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kDeleteGroups);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<DeleteGroupsRequest>(captured);

  DeleteGroupsRequest rd = DecodeCaptured<DeleteGroupsRequest>(
      captured, "librdkafka-2.0.2-delete_groups-v1-1.bin");
  EXPECT_EQ(rd.group_names, std::vector<std::string>{"wire-group-old"});
  DeleteGroupsRequest kp = DecodeCaptured<DeleteGroupsRequest>(
      captured, "kafka-python-2.0.2-delete_groups-v1-1.bin");
  EXPECT_EQ(kp.group_names, std::vector<std::string>{"wire-kp-group-old"});
}

}  // namespace
}  // namespace exactly::protocol
