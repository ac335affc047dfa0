#include "protocol/messages/list_transactions.h"

#include "gtest/gtest.h"
#include "unit/protocol/message_test_util.h"

namespace exactly::protocol {
namespace {

using ::exactly::protocol::testing::ExpectRoundTrip;
using ::exactly::protocol::testing::ExpectTruncationFails;
using ::exactly::protocol::testing::Hex;
using ::exactly::protocol::testing::In;
using ::exactly::protocol::testing::kAllVersions;

ListTransactionsRequest MakeRequest(int16_t v) {
  ListTransactionsRequest r;
  r.state_filters = {"Ongoing", "PrepareAbort"};
  r.producer_id_filters = {7, 8};
  if (In(v, 1)) r.duration_filter = 60000;
  return r;
}

ListTransactionsResponse MakeResponse(int16_t) {
  ListTransactionsResponse r;
  r.throttle_time_ms = 1;
  r.unknown_state_filters = {"Hanging"};
  r.transactions = {{"writer-1", 7, "Ongoing", {}},
                    {"writer-2", 8, "CompleteCommit", {}}};
  return r;
}

TEST(ListTransactionsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 1; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(ListTransactionsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 1; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(ListTransactionsTest, DurationFilterFromV1) {
  ListTransactionsRequest r;
  r.state_filters = {"Ongoing"};
  r.producer_id_filters = {5};
  r.duration_filter = 1000;
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("02 08 4f6e676f696e67 02 0000000000000005 00"));
  EXPECT_EQ(EncodeMessage(r, 1),
            Hex("02 08 4f6e676f696e67 02 0000000000000005 00000000000003e8 "
                "00"));
  // Absent in v0: Kafka's default, every transaction.
  absl::StatusOr<ListTransactionsRequest> v0 =
      DecodeMessage<ListTransactionsRequest>(EncodeMessage(r, 0), 0);
  ASSERT_TRUE(v0.ok()) << v0.status();
  EXPECT_EQ(v0->duration_filter, -1);
}

}  // namespace
}  // namespace exactly::protocol
