#include "protocol/messages/offset_delete.h"

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
using ::exactly::testing::WireSamplesDir;

OffsetDeleteRequest MakeRequest() {
  OffsetDeleteRequest r;
  r.group_id = "wire-group";
  r.topics = {{"wire-cons", {{2, {}}, {3, {}}}, {}}, {"other", {}, {}}};
  return r;
}

OffsetDeleteResponse MakeResponse() {
  OffsetDeleteResponse r;
  r.error_code = 0;
  r.throttle_time_ms = 12;
  r.topics = {{"wire-cons", {{2, 0, {}}, {3, 86, {}}}, {}}};
  return r;
}

TEST(OffsetDeleteTest, RoundTripsEveryVersion) {
  ExpectRoundTrip(MakeRequest(), MakeRequest(), 0);
  ExpectRoundTrip(MakeResponse(), MakeResponse(), 0);
}

TEST(OffsetDeleteTest, TruncatedInputFails) {
  ExpectTruncationFails(MakeRequest(), 0);
  ExpectTruncationFails(MakeResponse(), 0);
}

TEST(OffsetDeleteTest, NonFlexibleLayout) {
  // OffsetDelete has no flexible version: no tag sections anywhere.
  EXPECT_FALSE(IsFlexible(ApiKey::kOffsetDelete, 0));
  OffsetDeleteRequest r;
  r.group_id = "g";
  r.topics = {{"t", {{0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("0001 67 00000001 0001 74 00000001 00000000"));

  OffsetDeleteResponse resp;
  resp.error_code = 69;
  resp.topics = {{"t", {{0, 0, {}}}, {}}};
  // The error comes before the throttle time.
  EXPECT_EQ(EncodeMessage(resp, 0),
            Hex("0045 00000000 00000001 0001 74 00000001 00000000 0000"));
}

TEST(OffsetDeleteTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kOffsetDelete);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<OffsetDeleteRequest>(captured);

  OffsetDeleteRequest r = DecodeCaptured<OffsetDeleteRequest>(
      captured, "librdkafka-2.0.2-offset_delete-v0-1.bin");
  EXPECT_EQ(r.group_id, "wire-group");
  ASSERT_EQ(r.topics.size(), 1u);
  EXPECT_EQ(r.topics[0].name, "wire-cons");
  ASSERT_EQ(r.topics[0].partitions.size(), 1u);
  EXPECT_EQ(r.topics[0].partitions[0].index, 2);
}

}  // namespace
}  // namespace exactly::protocol
