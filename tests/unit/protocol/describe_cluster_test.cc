#include "protocol/messages/describe_cluster.h"

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

DescribeClusterRequest MakeRequest(int16_t) {
  DescribeClusterRequest r;
  r.include_cluster_authorized_operations = true;
  return r;
}

DescribeClusterResponse MakeResponse(int16_t) {
  DescribeClusterResponse r;
  r.throttle_time_ms = 1;
  r.error_code = 0;
  r.cluster_id = "exactly-cluster";
  r.controller_id = 1;
  r.brokers = {{1, "localhost", 9092, std::nullopt, {}},
               {2, "localhost", 9093, "rack-b", {}}};
  r.cluster_authorized_operations = 0x7f8;
  return r;
}

TEST(DescribeClusterTest, RoundTripsEveryVersion) {
  ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(0), 0);
  ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(0), 0);
}

TEST(DescribeClusterTest, TruncatedInputFails) {
  ExpectTruncationFails(MakeRequest(0), 0);
  ExpectTruncationFails(MakeResponse(0), 0);
}

TEST(DescribeClusterTest, FlexibleLayout) {
  // Flexible from v0: there is no non-flexible encoding.
  EXPECT_TRUE(IsFlexible(ApiKey::kDescribeCluster, 0));
  EXPECT_EQ(EncodeMessage(MakeRequest(0), 0), Hex("01 00"));

  DescribeClusterResponse resp;
  resp.cluster_id = "c";
  resp.controller_id = 1;
  resp.brokers = {{1, "h", 9092, std::nullopt, {}}};
  // throttle, error, null message, cluster id, controller; the broker with a
  // null rack and its tags; operations (INT32_MIN: not asked for); tags.
  EXPECT_EQ(EncodeMessage(resp, 0),
            Hex("00000000 0000 00 0263 00000001 02 00000001 0268 00002384 00 "
                "00 80000000 00"));
}

}  // namespace
}  // namespace exactly::protocol
