#include "protocol/messages/offset_fetch.h"

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

std::vector<OffsetFetchRequest::Topic> RequestTopics() {
  return {{"wire-cons", {0, 1, 3}, {}}, {"other", {}, {}}};
}

OffsetFetchRequest MakeRequest(int16_t v) {
  OffsetFetchRequest r;
  if (In(v, 0, 7)) {
    r.group_id = "wire-group";
    r.topics = RequestTopics();
  }
  if (In(v, 8)) {
    r.groups = {{"group-1", RequestTopics(), {}},
                {"group-2", std::nullopt, {}}};
  }
  if (In(v, 7)) r.require_stable = true;
  return r;
}

std::vector<OffsetFetchResponse::Topic> ResponseTopics(int16_t v) {
  OffsetFetchResponse::Partition committed;
  committed.index = 0;
  committed.committed_offset = 42;
  if (In(v, 5)) committed.committed_leader_epoch = 5;
  committed.metadata = "meta";
  OffsetFetchResponse::Partition unstable;
  unstable.index = 1;
  unstable.error_code = 88;  // UNSTABLE_OFFSET_COMMIT
  return {{"wire-cons", {committed, unstable}, {}}};
}

OffsetFetchResponse MakeResponse(int16_t v) {
  OffsetFetchResponse r;
  if (In(v, 3)) r.throttle_time_ms = 6;
  if (In(v, 0, 7)) r.topics = ResponseTopics(v);
  if (In(v, 2, 7)) r.error_code = 14;  // COORDINATOR_LOAD_IN_PROGRESS
  if (In(v, 8)) {
    r.groups = {{"group-1", ResponseTopics(v), 0, {}},
                {"group-2", {}, 16, {}}};  // NOT_COORDINATOR
  }
  return r;
}

TEST(OffsetFetchTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 8; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(OffsetFetchTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 8; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(OffsetFetchTest, NonFlexibleLayout) {
  OffsetFetchRequest r;
  r.group_id = "g";
  r.topics = {{{"t", {0}, {}}}};
  EXPECT_EQ(EncodeMessage(r, 1),
            Hex("0001 67 00000001 0001 74 00000001 00000000"));
  // "All topics" is a null array from v2; v0-1 cannot say it.
  r.topics.reset();
  EXPECT_EQ(EncodeMessage(r, 2), Hex("0001 67 ffffffff"));
  EXPECT_EQ(EncodeMessage(r, 1), Hex("0001 67 00000000"));

  OffsetFetchResponse resp;
  resp.topics = ResponseTopics(0);
  resp.topics[0].partitions.resize(1);
  resp.topics[0].partitions[0].metadata.reset();
  // index, offset, null metadata, error.
  EXPECT_EQ(EncodeMessage(resp, 1),
            Hex("00000001 0009 776972652d636f6e73 00000001 00000000 "
                "000000000000002a ffff 0000"));
  // v2 adds the top-level error; v3 the throttle time in front.
  EXPECT_EQ(EncodeMessage(resp, 3),
            Hex("00000000 00000001 0009 776972652d636f6e73 00000001 00000000 "
                "000000000000002a ffff 0000 0000"));
}

TEST(OffsetFetchTest, NullTopicsBeforeV2IsMalformed) {
  absl::StatusOr<OffsetFetchRequest> bad =
      DecodeMessage<OffsetFetchRequest>(Hex("0001 67 ffffffff"), 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("null where an array is required"));
  absl::StatusOr<OffsetFetchRequest> all =
      DecodeMessage<OffsetFetchRequest>(Hex("0001 67 ffffffff"), 2);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_FALSE(all->topics.has_value());
}

TEST(OffsetFetchTest, FlexibleLayout) {
  OffsetFetchRequest r;
  r.group_id = "g";
  r.topics = {{{"t", {0}, {}}}};
  EXPECT_EQ(EncodeMessage(r, 6), Hex("02 67 02 0274 02 00000000 00 00"));
  // v7 adds RequireStable before the final tags.
  r.require_stable = true;
  EXPECT_EQ(EncodeMessage(r, 7), Hex("02 67 02 0274 02 00000000 00 01 00"));
  // v8: one group asking for all topics (compact null, 00).
  r.groups = {{"g", std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(r, 8), Hex("02 0267 00 00 01 00"));

  OffsetFetchResponse resp;
  resp.groups = {{"g", ResponseTopics(8), 0, {}}};
  resp.groups[0].topics[0].name = "t";
  resp.groups[0].topics[0].partitions.resize(1);
  resp.groups[0].topics[0].partitions[0].committed_leader_epoch = -1;
  resp.groups[0].topics[0].partitions[0].metadata.reset();
  EXPECT_EQ(EncodeMessage(resp, 8),
            Hex("00000000 02 0267 02 0274 02 00000000 000000000000002a "
                "ffffffff 00 0000 00 00 0000 00 00"));
}

TEST(OffsetFetchTest, GroupsGivesOneFormForBoth) {
  OffsetFetchRequest v7 = MakeRequest(7);
  std::vector<OffsetFetchRequest::Group> groups = v7.Groups(7);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].group_id, "wire-group");
  EXPECT_EQ(groups[0].topics, RequestTopics());
  EXPECT_EQ(MakeRequest(8).Groups(8), MakeRequest(8).groups);
}

TEST(OffsetFetchTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kOffsetFetch);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<OffsetFetchRequest>(captured);

  OffsetFetchRequest v5 = DecodeCaptured<OffsetFetchRequest>(
      captured, "librdkafka-2.0.2-offset_fetch-v5-1.bin");
  EXPECT_EQ(v5.group_id, "wire-txn-group");
  ASSERT_TRUE(v5.topics.has_value());
  ASSERT_EQ(v5.topics->size(), 1u);
  EXPECT_EQ((*v5.topics)[0].name, "wire-txn-in");
  EXPECT_EQ((*v5.topics)[0].partition_indexes,
            (std::vector<int32_t>{0, 1, 2, 3}));

  // The flexible v7 that read_committed consumers send.
  OffsetFetchRequest v7 = DecodeCaptured<OffsetFetchRequest>(
      captured, "librdkafka-2.0.2-offset_fetch-v7-3.bin");
  EXPECT_EQ(v7.group_id, "wire-group");
  EXPECT_TRUE(v7.require_stable);
  ASSERT_TRUE(v7.topics.has_value());
  ASSERT_EQ(v7.topics->size(), 1u);
  EXPECT_EQ((*v7.topics)[0].name, "wire-cons");
  EXPECT_EQ((*v7.topics)[0].partition_indexes, (std::vector<int32_t>{0, 1}));

  OffsetFetchRequest all = DecodeCaptured<OffsetFetchRequest>(
      captured, "kafka-python-2.0.2-offset_fetch-v3-1.bin");
  EXPECT_EQ(all.group_id, "wire-kp-group");
  EXPECT_FALSE(all.topics.has_value());

  OffsetFetchRequest v1 = DecodeCaptured<OffsetFetchRequest>(
      captured, "kafka-python-2.0.2-offset_fetch-v1-1.bin");
  ASSERT_TRUE(v1.topics.has_value());
  ASSERT_EQ(v1.topics->size(), 1u);
  EXPECT_EQ((*v1.topics)[0].name, "wire-kp");
  EXPECT_EQ((*v1.topics)[0].partition_indexes,
            (std::vector<int32_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace exactly::protocol
