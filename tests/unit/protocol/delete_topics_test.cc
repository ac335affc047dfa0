#include "protocol/messages/delete_topics.h"

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

Uuid TestUuid() {
  Uuid id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(i + 1);
  return id;
}

DeleteTopicsRequest MakeRequest(int16_t v) {
  DeleteTopicsRequest r;
  if (In(v, 6)) {
    r.topics = {{"wire-admin-a", Uuid{}, {}}, {std::nullopt, TestUuid(), {}}};
  }
  if (In(v, 0, 5)) r.topic_names = {"wire-admin-a", "wire-admin-b"};
  r.timeout_ms = 5000;
  return r;
}

DeleteTopicsResponse MakeResponse(int16_t v) {
  DeleteTopicsResponse r;
  if (In(v, 1)) r.throttle_time_ms = 3;
  DeleteTopicsResponse::Topic deleted;
  deleted.name = "wire-admin-a";
  if (In(v, 6)) deleted.topic_id = TestUuid();
  DeleteTopicsResponse::Topic refused;
  refused.name = "wire-admin-b";
  refused.error_code = 73;  // TOPIC_DELETION_DISABLED
  if (In(v, 5)) refused.error_message = "deletion is disabled";
  r.topics = {deleted, refused};
  return r;
}

TEST(DeleteTopicsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 6; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(DeleteTopicsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 6; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(DeleteTopicsTest, NonFlexibleLayout) {
  DeleteTopicsRequest r;
  r.topic_names = {"t"};
  r.timeout_ms = 5000;
  EXPECT_EQ(EncodeMessage(r, 0), Hex("00000001 0001 74 00001388"));

  DeleteTopicsResponse resp;
  resp.topics = {{"t", Uuid{}, 0, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(resp, 0), Hex("00000001 0001 74 0000"));
  EXPECT_EQ(EncodeMessage(resp, 1), Hex("00000000 00000001 0001 74 0000"));
}

TEST(DeleteTopicsTest, FlexibleLayout) {
  DeleteTopicsRequest r;
  r.topic_names = {"t"};
  r.timeout_ms = 5000;
  EXPECT_EQ(EncodeMessage(r, 4), Hex("02 0274 00001388 00"));
  // v6: by id, with a null name and the 16 raw uuid bytes.
  r.topics = {{std::nullopt, TestUuid(), {}}};
  EXPECT_EQ(EncodeMessage(r, 6),
            Hex("02 00 0102030405060708090a0b0c0d0e0f10 00 00001388 00"));

  DeleteTopicsResponse resp;
  resp.topics = {{"t", Uuid{}, 0, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(resp, 4), Hex("00000000 02 0274 0000 00 00"));
  // v5 adds the (null) error message.
  EXPECT_EQ(EncodeMessage(resp, 5), Hex("00000000 02 0274 0000 00 00 00"));
}

TEST(DeleteTopicsTest, NameIsNullableOnlyFromV6) {
  DeleteTopicsResponse resp;
  resp.topics = {{std::nullopt, TestUuid(), 100, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(resp, 6),
            Hex("00000000 02 00 0102030405060708090a0b0c0d0e0f10 0064 00 00 "
                "00"));
  // Before v6 a null name is sent as "".
  EXPECT_EQ(EncodeMessage(resp, 5), Hex("00000000 02 01 0064 00 00 00"));
  EXPECT_EQ(EncodeMessage(resp, 3), Hex("00000000 00000001 0000 0064"));

  absl::StatusOr<DeleteTopicsResponse> bad =
      DecodeMessage<DeleteTopicsResponse>(Hex("00000000 02 00 0064 00 00 00"),
                                          5);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("null where a string is required"));
}

TEST(DeleteTopicsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kDeleteTopics);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<DeleteTopicsRequest>(captured);

  DeleteTopicsRequest v1 = DecodeCaptured<DeleteTopicsRequest>(
      captured, "librdkafka-2.0.2-delete_topics-v1-1.bin");
  EXPECT_EQ(v1.topic_names,
            (std::vector<std::string>{"wire-admin-a", "wire-admin-b"}));
  EXPECT_EQ(v1.timeout_ms, 5000);

  DeleteTopicsRequest v3 = DecodeCaptured<DeleteTopicsRequest>(
      captured, "kafka-python-2.0.2-delete_topics-v3-1.bin");
  EXPECT_EQ(v3.topic_names,
            (std::vector<std::string>{"wire-kp-admin-a", "wire-kp-admin-b"}));
  EXPECT_EQ(v3.timeout_ms, 5000);
}

}  // namespace
}  // namespace exactly::protocol
