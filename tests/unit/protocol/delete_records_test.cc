#include "protocol/messages/delete_records.h"

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

DeleteRecordsRequest MakeRequest(int16_t) {
  DeleteRecordsRequest r;
  r.topics = {{"wire-admin-a", {{0, 5, {}}, {1, -1, {}}}, {}}};
  r.timeout_ms = 5000;
  return r;
}

DeleteRecordsResponse MakeResponse(int16_t) {
  DeleteRecordsResponse r;
  r.throttle_time_ms = 2;
  r.topics = {{"wire-admin-a", {{0, 5, 0, {}}, {1, -1, 1, {}}}, {}}};
  return r;
}

TEST(DeleteRecordsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 2; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(DeleteRecordsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 2; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(DeleteRecordsTest, NonFlexibleLayout) {
  DeleteRecordsRequest r;
  r.topics = {{"t", {{0, 5, {}}}, {}}};
  r.timeout_ms = 5000;
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("00000001 0001 74 00000001 00000000 0000000000000005 "
                "00001388"));

  DeleteRecordsResponse resp;
  resp.topics = {{"t", {{0, 5, 0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 1),
            Hex("00000000 00000001 0001 74 00000001 00000000 "
                "0000000000000005 0000"));
}

TEST(DeleteRecordsTest, FlexibleLayout) {
  DeleteRecordsRequest r;
  r.topics = {{"t", {{0, 5, {}}}, {}}};
  r.timeout_ms = 5000;
  EXPECT_EQ(EncodeMessage(r, 2),
            Hex("02 0274 02 00000000 0000000000000005 00 00 00001388 00"));

  DeleteRecordsResponse resp;
  resp.topics = {{"t", {{0, 5, 0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 2),
            Hex("00000000 02 0274 02 00000000 0000000000000005 0000 00 00 00"));
}

TEST(DeleteRecordsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kDeleteRecords);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<DeleteRecordsRequest>(captured);

  DeleteRecordsRequest r = DecodeCaptured<DeleteRecordsRequest>(
      captured, "librdkafka-2.0.2-delete_records-v1-1.bin");
  EXPECT_EQ(r.timeout_ms, 5000);
  ASSERT_EQ(r.topics.size(), 1u);
  EXPECT_EQ(r.topics[0].name, "wire-admin-a");
  ASSERT_EQ(r.topics[0].partitions.size(), 2u);
  EXPECT_EQ(r.topics[0].partitions[0].index, 0);
  EXPECT_EQ(r.topics[0].partitions[0].offset, 5);
  EXPECT_EQ(r.topics[0].partitions[1].index, 1);
  EXPECT_EQ(r.topics[0].partitions[1].offset, -1);
}

}  // namespace
}  // namespace exactly::protocol
