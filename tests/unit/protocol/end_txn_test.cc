#include "protocol/messages/end_txn.h"

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

EndTxnRequest MakeRequest(int16_t) {
  EndTxnRequest r;
  r.transactional_id = "wire-txn-1";
  r.producer_id = 4000;
  r.producer_epoch = 3;
  r.committed = true;
  return r;
}

EndTxnResponse MakeResponse(int16_t) {
  EndTxnResponse r;
  r.throttle_time_ms = 10;
  r.error_code = 48;  // INVALID_TXN_STATE
  return r;
}

TEST(EndTxnTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(EndTxnTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(EndTxnTest, NonFlexibleLayout) {
  EndTxnRequest r;
  r.transactional_id = "t";
  r.producer_id = 1;
  r.producer_epoch = 2;
  r.committed = true;
  EXPECT_EQ(EncodeMessage(r, 1), Hex("0001 74 0000000000000001 0002 01"));

  EndTxnResponse resp;
  EXPECT_EQ(EncodeMessage(resp, 0), Hex("00000000 0000"));
}

TEST(EndTxnTest, FlexibleLayout) {
  EndTxnRequest r;
  r.transactional_id = "t";
  r.producer_id = 1;
  r.producer_epoch = 2;
  r.committed = false;
  EXPECT_EQ(EncodeMessage(r, 3), Hex("02 74 0000000000000001 0002 00 00"));

  EndTxnResponse resp;
  EXPECT_EQ(EncodeMessage(resp, 3), Hex("00000000 0000 00"));
}

TEST(EndTxnTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured = CapturedRequests(ApiKey::kEndTxn);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<EndTxnRequest>(captured);

  EndTxnRequest commit = DecodeCaptured<EndTxnRequest>(
      captured, "librdkafka-2.0.2-end_txn-v1-1.bin");
  EXPECT_EQ(commit.transactional_id, "wire-txn-1");
  EXPECT_TRUE(commit.committed);

  EndTxnRequest abort = DecodeCaptured<EndTxnRequest>(
      captured, "librdkafka-2.0.2-end_txn-v1-2.bin");
  EXPECT_EQ(abort.transactional_id, "wire-txn-1");
  EXPECT_FALSE(abort.committed);
}

}  // namespace
}  // namespace exactly::protocol
