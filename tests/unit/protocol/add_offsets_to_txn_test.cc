#include "protocol/messages/add_offsets_to_txn.h"

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

AddOffsetsToTxnRequest MakeRequest(int16_t) {
  AddOffsetsToTxnRequest r;
  r.transactional_id = "wire-txn-1";
  r.producer_id = 4000;
  r.producer_epoch = 3;
  r.group_id = "wire-txn-group";
  return r;
}

AddOffsetsToTxnResponse MakeResponse(int16_t) {
  AddOffsetsToTxnResponse r;
  r.throttle_time_ms = 10;
  r.error_code = 51;  // CONCURRENT_TRANSACTIONS
  return r;
}

TEST(AddOffsetsToTxnTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(AddOffsetsToTxnTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(AddOffsetsToTxnTest, NonFlexibleLayout) {
  AddOffsetsToTxnRequest r;
  r.transactional_id = "t";
  r.producer_id = 1;
  r.producer_epoch = 2;
  r.group_id = "g";
  EXPECT_EQ(EncodeMessage(r, 0), Hex("0001 74 0000000000000001 0002 0001 67"));

  AddOffsetsToTxnResponse resp;
  resp.error_code = 47;
  EXPECT_EQ(EncodeMessage(resp, 1), Hex("00000000 002f"));
}

TEST(AddOffsetsToTxnTest, FlexibleLayout) {
  AddOffsetsToTxnRequest r;
  r.transactional_id = "t";
  r.producer_id = 1;
  r.producer_epoch = 2;
  r.group_id = "g";
  EXPECT_EQ(EncodeMessage(r, 3), Hex("02 74 0000000000000001 0002 02 67 00"));

  AddOffsetsToTxnResponse resp;
  resp.error_code = 90;
  EXPECT_EQ(EncodeMessage(resp, 3), Hex("00000000 005a 00"));
}

TEST(AddOffsetsToTxnTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kAddOffsetsToTxn);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<AddOffsetsToTxnRequest>(captured);

  AddOffsetsToTxnRequest r = DecodeCaptured<AddOffsetsToTxnRequest>(
      captured, "librdkafka-2.0.2-add_offsets_to_txn-v0-1.bin");
  EXPECT_EQ(r.transactional_id, "wire-txn-1");
  EXPECT_EQ(r.group_id, "wire-txn-group");
  EXPECT_GE(r.producer_id, 0);
}

}  // namespace
}  // namespace exactly::protocol
