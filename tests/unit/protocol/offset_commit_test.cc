#include "protocol/messages/offset_commit.h"

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

OffsetCommitRequest MakeRequest(int16_t v) {
  OffsetCommitRequest r;
  r.group_id = "wire-group";
  if (In(v, 1)) {
    r.generation_id = 2;
    r.member_id = "member-1";
  }
  if (In(v, 7)) r.group_instance_id = "instance-1";
  if (In(v, 2, 4)) r.retention_time_ms = 86400000;
  OffsetCommitRequest::Partition p0;
  p0.index = 0;
  p0.committed_offset = 42;
  if (In(v, 6)) p0.committed_leader_epoch = 5;
  if (In(v, 1, 1)) p0.commit_timestamp = 1700000000000;
  p0.committed_metadata = "meta";
  OffsetCommitRequest::Partition p3;
  p3.index = 3;
  p3.committed_offset = 7;
  r.topics = {{"wire-cons", {p0, p3}, {}}, {"other", {}, {}}};
  return r;
}

OffsetCommitResponse MakeResponse(int16_t v) {
  OffsetCommitResponse r;
  if (In(v, 3)) r.throttle_time_ms = 11;
  r.topics = {{"wire-cons", {{0, 0, {}}, {3, 12, {}}}, {}}};
  return r;
}

TEST(OffsetCommitTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 8; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(OffsetCommitTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 8; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

OffsetCommitRequest Tiny() {
  OffsetCommitRequest r;
  r.group_id = "g";
  OffsetCommitRequest::Partition p;
  p.committed_offset = 42;
  r.topics = {{"t", {p}, {}}};
  return r;
}

TEST(OffsetCommitTest, NonFlexibleLayout) {
  // group; one topic with one partition: index, offset, null metadata.
  EXPECT_EQ(EncodeMessage(Tiny(), 0),
            Hex("0001 67 00000001 0001 74 00000001 00000000 000000000000002a "
                "ffff"));
  // v1: generation -1 and empty member id; a commit timestamp per partition.
  EXPECT_EQ(EncodeMessage(Tiny(), 1),
            Hex("0001 67 ffffffff 0000 00000001 0001 74 00000001 00000000 "
                "000000000000002a ffffffffffffffff ffff"));
  // v2: the retention time replaces the per-partition timestamp.
  EXPECT_EQ(EncodeMessage(Tiny(), 2),
            Hex("0001 67 ffffffff 0000 ffffffffffffffff 00000001 0001 74 "
                "00000001 00000000 000000000000002a ffff"));

  OffsetCommitResponse resp;
  resp.topics = {{"t", {{0, 0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 0),
            Hex("00000001 0001 74 00000001 00000000 0000"));
}

TEST(OffsetCommitTest, FlexibleLayout) {
  // group, generation, member, null instance id, compact arrays; the
  // partition has a leader epoch (-1), a null compact metadata and tags.
  EXPECT_EQ(EncodeMessage(Tiny(), 8),
            Hex("02 67 ffffffff 01 00 02 0274 02 00000000 000000000000002a "
                "ffffffff 00 00 00 00"));

  OffsetCommitResponse resp;
  resp.topics = {{"t", {{0, 0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 8),
            Hex("00000000 02 0274 02 00000000 0000 00 00 00"));
}

TEST(OffsetCommitTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kOffsetCommit);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<OffsetCommitRequest>(captured);

  OffsetCommitRequest v7 = DecodeCaptured<OffsetCommitRequest>(
      captured, "librdkafka-2.0.2-offset_commit-v7-1.bin");
  EXPECT_EQ(v7.group_id, "wire-group");
  EXPECT_EQ(v7.generation_id, 2);
  EXPECT_EQ(v7.member_id, "0x7f07a0003480");
  EXPECT_EQ(v7.group_instance_id, std::nullopt);
  size_t partitions = 0;
  for (const auto& t : v7.topics) partitions += t.partitions.size();
  EXPECT_EQ(partitions, 3u);

  OffsetCommitRequest with_metadata = DecodeCaptured<OffsetCommitRequest>(
      captured, "librdkafka-2.0.2-offset_commit-v7-2.bin");
  ASSERT_FALSE(with_metadata.topics.empty());
  ASSERT_FALSE(with_metadata.topics[0].partitions.empty());
  EXPECT_TRUE(with_metadata.topics[0].partitions[0].committed_metadata);

  OffsetCommitRequest admin = DecodeCaptured<OffsetCommitRequest>(
      captured, "librdkafka-2.0.2-offset_commit-v7-3.bin");
  EXPECT_EQ(admin.generation_id, -1);
  EXPECT_EQ(admin.member_id, "");

  OffsetCommitRequest v2 = DecodeCaptured<OffsetCommitRequest>(
      captured, "kafka-python-2.0.2-offset_commit-v2-1.bin");
  EXPECT_EQ(v2.group_id, "wire-kp-group");
  EXPECT_EQ(v2.generation_id, 2);
  EXPECT_EQ(v2.member_id, "0x7f90440041c0");
  EXPECT_EQ(v2.retention_time_ms, -1);
  ASSERT_EQ(v2.topics.size(), 1u);
  EXPECT_EQ(v2.topics[0].partitions.size(), 4u);
}

}  // namespace
}  // namespace exactly::protocol
