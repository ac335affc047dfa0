#include "protocol/messages/create_partitions.h"

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

CreatePartitionsRequest MakeRequest(int16_t) {
  CreatePartitionsRequest r;
  r.topics = {{"wire-admin-a", 6, std::nullopt, {}},
              {"wire-admin-b", 4, {{{{1, 2}, {}}, {{2, 3}, {}}}}, {}}};
  r.timeout_ms = 60000;
  r.validate_only = true;
  return r;
}

CreatePartitionsResponse MakeResponse(int16_t) {
  CreatePartitionsResponse r;
  r.throttle_time_ms = 1;
  r.results = {{"wire-admin-a", 0, std::nullopt, {}},
               {"wire-admin-b", 37, "too few partitions", {}}};
  return r;
}

TEST(CreatePartitionsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(CreatePartitionsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(CreatePartitionsTest, NonFlexibleLayout) {
  CreatePartitionsRequest r;
  r.topics = {{"t", 6, std::nullopt, {}}};
  r.timeout_ms = 5000;
  // Null assignments are an int32 -1.
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("00000001 0001 74 00000006 ffffffff 00001388 00"));
  r.topics[0].assignments = {{{{1}, {}}}};
  EXPECT_EQ(EncodeMessage(r, 1), Hex("00000001 0001 74 00000006 00000001 "
                                     "00000001 00000001 00001388 00"));

  CreatePartitionsResponse resp;
  resp.results = {{"t", 0, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(resp, 0), Hex("00000000 00000001 0001 74 0000 ffff"));
}

TEST(CreatePartitionsTest, FlexibleLayout) {
  CreatePartitionsRequest r;
  r.topics = {{"t", 6, std::nullopt, {}}};
  r.timeout_ms = 5000;
  EXPECT_EQ(EncodeMessage(r, 2), Hex("02 0274 00000006 00 00 00001388 00 00"));

  CreatePartitionsResponse resp;
  resp.results = {{"t", 0, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(resp, 3), Hex("00000000 02 0274 0000 00 00 00"));
}

TEST(CreatePartitionsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kCreatePartitions);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<CreatePartitionsRequest>(captured);

  CreatePartitionsRequest v0 = DecodeCaptured<CreatePartitionsRequest>(
      captured, "librdkafka-2.0.2-create_partitions-v0-1.bin");
  ASSERT_EQ(v0.topics.size(), 1u);
  EXPECT_EQ(v0.topics[0].name, "wire-admin-a");
  EXPECT_EQ(v0.topics[0].count, 6);
  EXPECT_EQ(v0.timeout_ms, 60000);
  EXPECT_FALSE(v0.validate_only);

  CreatePartitionsRequest v1 = DecodeCaptured<CreatePartitionsRequest>(
      captured, "kafka-python-2.0.2-create_partitions-v1-1.bin");
  ASSERT_EQ(v1.topics.size(), 1u);
  EXPECT_EQ(v1.topics[0].name, "wire-kp-admin-a");
  EXPECT_EQ(v1.topics[0].count, 6);
  EXPECT_EQ(v1.timeout_ms, 5000);
  EXPECT_FALSE(v1.validate_only);
}

}  // namespace
}  // namespace exactly::protocol
