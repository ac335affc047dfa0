#include "protocol/messages/describe_transactions.h"

#include "gtest/gtest.h"
#include "unit/protocol/message_test_util.h"

namespace exactly::protocol {
namespace {

using ::exactly::protocol::testing::ExpectRoundTrip;
using ::exactly::protocol::testing::ExpectTruncationFails;
using ::exactly::protocol::testing::Hex;
using ::exactly::protocol::testing::kAllVersions;

DescribeTransactionsRequest MakeRequest(int16_t) {
  DescribeTransactionsRequest r;
  r.transactional_ids = {"writer-1", "missing"};
  return r;
}

DescribeTransactionsResponse MakeResponse(int16_t) {
  DescribeTransactionsResponse r;
  r.throttle_time_ms = 2;
  DescribeTransactionsResponse::Transaction ongoing;
  ongoing.transactional_id = "writer-1";
  ongoing.state = "Ongoing";
  ongoing.timeout_ms = 60000;
  ongoing.start_time_ms = 1700000000000;
  ongoing.producer_id = 1000;
  ongoing.producer_epoch = 3;
  ongoing.topics = {{"orders", {0, 1}, {}}, {"audit", {4}, {}}};
  DescribeTransactionsResponse::Transaction missing;
  missing.error_code = 105;
  missing.transactional_id = "missing";
  r.transactions = {ongoing, missing};
  return r;
}

TEST(DescribeTransactionsTest, RoundTrips) {
  ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(0), 0);
  ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(0), 0);
}

TEST(DescribeTransactionsTest, TruncatedInputFails) {
  ExpectTruncationFails(MakeRequest(0), 0);
  ExpectTruncationFails(MakeResponse(0), 0);
}

TEST(DescribeTransactionsTest, FlexibleLayout) {
  DescribeTransactionsRequest request;
  request.transactional_ids = {"x"};
  EXPECT_EQ(EncodeMessage(request, 0), Hex("02 0278 00"));
  DescribeTransactionsResponse response;
  DescribeTransactionsResponse::Transaction t;
  t.transactional_id = "x";
  t.state = "Empty";
  t.timeout_ms = 1;
  t.start_time_ms = -1;
  t.producer_id = 2;
  t.producer_epoch = 3;
  response.transactions = {t};
  EXPECT_EQ(EncodeMessage(response, 0),
            Hex("00000000 02 0000 0278 06 456d707479 00000001 "
                "ffffffffffffffff 0000000000000002 0003 01 00 00"));
}

}  // namespace
}  // namespace exactly::protocol
