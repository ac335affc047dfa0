#include "protocol/messages/txn_offset_commit.h"

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

TxnOffsetCommitRequest MakeRequest(int16_t v) {
  TxnOffsetCommitRequest r;
  r.transactional_id = "wire-txn-1";
  r.group_id = "wire-txn-group";
  r.producer_id = 4000;
  r.producer_epoch = 3;
  if (In(v, 3)) {
    r.generation_id = 2;
    r.member_id = "member-1";
    r.group_instance_id = "instance-1";
  }
  TxnOffsetCommitRequest::Partition p0;
  p0.index = 0;
  p0.committed_offset = 3;
  if (In(v, 2)) p0.committed_leader_epoch = 1;
  p0.committed_metadata = "meta";
  TxnOffsetCommitRequest::Partition p1;
  p1.index = 1;
  p1.committed_offset = 7;
  r.topics = {{"wire-txn-in", {p0, p1}, {}}};
  return r;
}

TxnOffsetCommitResponse MakeResponse(int16_t) {
  TxnOffsetCommitResponse r;
  r.throttle_time_ms = 10;
  r.topics = {{"wire-txn-in", {{0, 0, {}}, {1, 22, {}}}, {}}};
  return r;
}

TEST(TxnOffsetCommitTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(TxnOffsetCommitTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TxnOffsetCommitRequest Tiny() {
  TxnOffsetCommitRequest r;
  r.transactional_id = "t";
  r.group_id = "g";
  r.producer_id = 1;
  r.producer_epoch = 0;
  TxnOffsetCommitRequest::Partition p;
  p.committed_offset = 42;
  r.topics = {{"a", {p}, {}}};
  return r;
}

TEST(TxnOffsetCommitTest, NonFlexibleLayout) {
  EXPECT_EQ(EncodeMessage(Tiny(), 0),
            Hex("0001 74 0001 67 0000000000000001 0000 00000001 0001 61 "
                "00000001 00000000 000000000000002a ffff"));
  // v2 adds the leader epoch after the offset.
  EXPECT_EQ(EncodeMessage(Tiny(), 2),
            Hex("0001 74 0001 67 0000000000000001 0000 00000001 0001 61 "
                "00000001 00000000 000000000000002a ffffffff ffff"));

  TxnOffsetCommitResponse resp;
  resp.topics = {{"a", {{0, 0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 0),
            Hex("00000000 00000001 0001 61 00000001 00000000 0000"));
}

TEST(TxnOffsetCommitTest, FlexibleLayout) {
  // v3: generation -1, empty member id, null instance id after the epoch.
  EXPECT_EQ(EncodeMessage(Tiny(), 3),
            Hex("02 74 02 67 0000000000000001 0000 ffffffff 01 00 02 0261 02 "
                "00000000 000000000000002a ffffffff 00 00 00 00"));

  TxnOffsetCommitResponse resp;
  resp.topics = {{"a", {{0, 0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 3),
            Hex("00000000 02 0261 02 00000000 0000 00 00 00"));
}

TEST(TxnOffsetCommitTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kTxnOffsetCommit);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<TxnOffsetCommitRequest>(captured);

  for (const char* file : {"librdkafka-2.0.2-txn_offset_commit-v2-1.bin",
                           "librdkafka-2.0.2-txn_offset_commit-v3-1.bin"}) {
    SCOPED_TRACE(file);
    TxnOffsetCommitRequest r =
        DecodeCaptured<TxnOffsetCommitRequest>(captured, file);
    EXPECT_EQ(r.transactional_id, "wire-txn-1");
    EXPECT_EQ(r.group_id, "wire-txn-group");
    ASSERT_EQ(r.topics.size(), 1u);
    EXPECT_EQ(r.topics[0].name, "wire-txn-in");
    ASSERT_EQ(r.topics[0].partitions.size(), 2u);
    EXPECT_EQ(r.topics[0].partitions[0].index, 0);
    EXPECT_EQ(r.topics[0].partitions[0].committed_offset, 3);
    EXPECT_EQ(r.topics[0].partitions[1].index, 1);
    EXPECT_EQ(r.topics[0].partitions[1].committed_offset, 7);
  }

  // v3 carries the consumer's group metadata (KIP-447).
  TxnOffsetCommitRequest v3 = DecodeCaptured<TxnOffsetCommitRequest>(
      captured, "librdkafka-2.0.2-txn_offset_commit-v3-1.bin");
  EXPECT_EQ(v3.generation_id, 2);
  EXPECT_EQ(v3.member_id, "0x7f00780036e0");
  EXPECT_EQ(v3.group_instance_id, std::nullopt);
}

}  // namespace
}  // namespace exactly::protocol
