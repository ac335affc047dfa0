#include "protocol/messages/write_txn_markers.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "unit/protocol/message_test_util.h"

namespace exactly::protocol {
namespace {

using ::exactly::protocol::testing::ExpectRoundTrip;
using ::exactly::protocol::testing::ExpectTruncationFails;
using ::exactly::protocol::testing::Hex;
using ::exactly::protocol::testing::kAllVersions;

WriteTxnMarkersRequest MakeRequest(int16_t) {
  WriteTxnMarkersRequest r;
  WriteTxnMarkersRequest::Marker commit;
  commit.producer_id = 4000;
  commit.producer_epoch = 3;
  commit.transaction_result = true;
  commit.topics = {{"wire-txn-out", {0, 2}, {}},
                   {"__consumer_offsets", {7}, {}}};
  commit.coordinator_epoch = 5;
  WriteTxnMarkersRequest::Marker abort;
  abort.producer_id = 4001;
  abort.producer_epoch = 0;
  abort.topics = {{"wire-txn-out", {1}, {}}};
  r.markers = {commit, abort};
  return r;
}

WriteTxnMarkersResponse MakeResponse(int16_t) {
  WriteTxnMarkersResponse r;
  WriteTxnMarkersResponse::Marker m;
  m.producer_id = 4000;
  m.topics = {{"wire-txn-out", {{0, 0, {}}, {2, 6, {}}}, {}}};
  r.markers = {m};
  return r;
}

TEST(WriteTxnMarkersTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 1; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(WriteTxnMarkersTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 1; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

WriteTxnMarkersRequest TinyRequest() {
  WriteTxnMarkersRequest r;
  WriteTxnMarkersRequest::Marker m;
  m.producer_id = 1;
  m.producer_epoch = 0;
  m.transaction_result = true;
  m.topics = {{"t", {0}, {}}};
  m.coordinator_epoch = 5;
  r.markers = {m};
  return r;
}

WriteTxnMarkersResponse TinyResponse() {
  WriteTxnMarkersResponse r;
  WriteTxnMarkersResponse::Marker m;
  m.producer_id = 1;
  m.topics = {{"t", {{0, 0, {}}}, {}}};
  r.markers = {m};
  return r;
}

TEST(WriteTxnMarkersTest, NonFlexibleLayout) {
  EXPECT_EQ(EncodeMessage(TinyRequest(), 0),
            Hex("00000001 0000000000000001 0000 01 00000001 0001 74 00000001 "
                "00000000 00000005"));
  EXPECT_EQ(EncodeMessage(TinyResponse(), 0),
            Hex("00000001 0000000000000001 00000001 0001 74 00000001 00000000 "
                "0000"));
}

TEST(WriteTxnMarkersTest, FlexibleLayout) {
  EXPECT_EQ(EncodeMessage(TinyRequest(), 1),
            Hex("02 0000000000000001 0000 01 02 0274 02 00000000 00 00000005 "
                "00 00"));
  EXPECT_EQ(EncodeMessage(TinyResponse(), 1),
            Hex("02 0000000000000001 02 0274 02 00000000 0000 00 00 00 00"));
}

}  // namespace
}  // namespace exactly::protocol
