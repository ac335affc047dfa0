#include "protocol/messages/add_partitions_to_txn.h"

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

AddPartitionsToTxnRequest MakeRequest(int16_t) {
  AddPartitionsToTxnRequest r;
  r.transactional_id = "wire-txn-1";
  r.producer_id = 4000;
  r.producer_epoch = 3;
  r.topics = {{"wire-txn-out", {3, 1, 2}, {}}, {"other", {0}, {}}};
  return r;
}

AddPartitionsToTxnResponse MakeResponse(int16_t) {
  AddPartitionsToTxnResponse r;
  r.throttle_time_ms = 10;
  r.topics = {{"wire-txn-out", {{3, 0, {}}, {1, 55, {}}}, {}}};
  return r;
}

TEST(AddPartitionsToTxnTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(AddPartitionsToTxnTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 3; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(AddPartitionsToTxnTest, NonFlexibleLayout) {
  AddPartitionsToTxnRequest r;
  r.transactional_id = "t";
  r.producer_id = 1;
  r.producer_epoch = 0;
  r.topics = {{"a", {0}, {}}};
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("0001 74 0000000000000001 0000 00000001 0001 61 00000001 "
                "00000000"));

  AddPartitionsToTxnResponse resp;
  resp.topics = {{"a", {{0, 0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 2),
            Hex("00000000 00000001 0001 61 00000001 00000000 0000"));
}

// v4 (KIP-890): Transactions[TransactionalId, ProducerId, ProducerEpoch,
// VerifyOnly, Topics] in the request; ErrorCode and ResultsByTransaction in
// the response, as Kafka's AddPartitionsToTxn{Request,Response}.json lay
// them out.
TEST(AddPartitionsToTxnTest, BatchedLayoutV4) {
  AddPartitionsToTxnRequest r;
  auto& x = r.transactions.emplace_back();
  x.transactional_id = "t";
  x.producer_id = 1;
  x.producer_epoch = 0;
  x.verify_only = true;
  x.topics = {{"a", {0}, {}}};
  EXPECT_EQ(EncodeMessage(r, 4),
            Hex("02 0274 0000000000000001 0000 01 02 0261 02 00000000 00 00 "
                "00"));
  ExpectRoundTrip(r, r, 4);

  AddPartitionsToTxnResponse resp;
  auto& rx = resp.transactions.emplace_back();
  rx.transactional_id = "t";
  rx.topics = {{"a", {{0, 48, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 4),
            Hex("00000000 0000 02 0274 02 0261 02 00000000 0030 00 00 00 00"));
  ExpectRoundTrip(resp, resp, 4);
  ExpectTruncationFails(r, 4);
  ExpectTruncationFails(resp, 4);
}

TEST(AddPartitionsToTxnTest, FlexibleLayout) {
  AddPartitionsToTxnRequest r;
  r.transactional_id = "t";
  r.producer_id = 1;
  r.producer_epoch = 0;
  r.topics = {{"a", {0}, {}}};
  EXPECT_EQ(EncodeMessage(r, 3),
            Hex("02 74 0000000000000001 0000 02 0261 02 00000000 00 00"));

  AddPartitionsToTxnResponse resp;
  resp.topics = {{"a", {{0, 0, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(resp, 3),
            Hex("00000000 02 0261 02 00000000 0000 00 00 00"));
}

TEST(AddPartitionsToTxnTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kAddPartitionsToTxn);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<AddPartitionsToTxnRequest>(captured);

  AddPartitionsToTxnRequest r = DecodeCaptured<AddPartitionsToTxnRequest>(
      captured, "librdkafka-2.0.2-add_partitions_to_txn-v0-1.bin");
  EXPECT_EQ(r.transactional_id, "wire-txn-1");
  EXPECT_GE(r.producer_id, 0);
  EXPECT_GE(r.producer_epoch, 0);
  ASSERT_EQ(r.topics.size(), 1u);
  EXPECT_EQ(r.topics[0].name, "wire-txn-out");
  EXPECT_EQ(r.topics[0].partitions, (std::vector<int32_t>{3, 1, 2}));

  AddPartitionsToTxnRequest later = DecodeCaptured<AddPartitionsToTxnRequest>(
      captured, "librdkafka-2.0.2-add_partitions_to_txn-v0-3.bin");
  ASSERT_EQ(later.topics.size(), 1u);
  EXPECT_EQ(later.topics[0].partitions, (std::vector<int32_t>{2, 0}));
}

}  // namespace
}  // namespace exactly::protocol
