#include "protocol/messages/describe_producers.h"

#include "gtest/gtest.h"
#include "unit/protocol/message_test_util.h"

namespace exactly::protocol {
namespace {

using ::exactly::protocol::testing::ExpectRoundTrip;
using ::exactly::protocol::testing::ExpectTruncationFails;
using ::exactly::protocol::testing::Hex;
using ::exactly::protocol::testing::kAllVersions;

DescribeProducersRequest MakeRequest(int16_t) {
  DescribeProducersRequest r;
  r.topics = {{"orders", {0, 2}, {}}, {"audit", {1}, {}}};
  return r;
}

DescribeProducersResponse MakeResponse(int16_t) {
  DescribeProducersResponse r;
  r.throttle_time_ms = 3;
  DescribeProducersResponse::Partition open;
  open.index = 0;
  open.active_producers = {{1000, 2, 41, 1700000000000, 4, 77, {}},
                           {1001, 0, 9, 1700000000500, -1, -1, {}}};
  DescribeProducersResponse::Partition unknown;
  unknown.index = 2;
  unknown.error_code = 3;
  unknown.error_message = "no such partition";
  r.topics = {{"orders", {open, unknown}, {}}};
  return r;
}

TEST(DescribeProducersTest, RoundTrips) {
  ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(0), 0);
  ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(0), 0);
}

TEST(DescribeProducersTest, TruncatedInputFails) {
  ExpectTruncationFails(MakeRequest(0), 0);
  ExpectTruncationFails(MakeResponse(0), 0);
}

// Flexible from v0; the producer epoch is an int32 here (Kafka's
// DescribeProducersResponse.json), unlike in every other message.
TEST(DescribeProducersTest, FlexibleLayout) {
  DescribeProducersRequest request;
  request.topics = {{"t", {0}, {}}};
  EXPECT_EQ(EncodeMessage(request, 0), Hex("02 0274 02 00000000 00 00"));
  DescribeProducersResponse response;
  DescribeProducersResponse::Partition p;
  p.active_producers = {{1, 2, 3, 4, 5, 6, {}}};
  response.topics = {{"t", {p}, {}}};
  EXPECT_EQ(EncodeMessage(response, 0),
            Hex("00000000 02 0274 02 00000000 0000 00 02 "
                "0000000000000001 00000002 00000003 0000000000000004 "
                "00000005 0000000000000006 00 00 00 00"));
}

}  // namespace
}  // namespace exactly::protocol
