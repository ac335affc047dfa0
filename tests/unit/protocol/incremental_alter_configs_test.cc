#include "protocol/messages/incremental_alter_configs.h"

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

IncrementalAlterConfigsRequest MakeRequest(int16_t) {
  IncrementalAlterConfigsRequest r;
  r.resources = {{2,
                  "wire-admin-a",
                  {{"retention.ms", kConfigOpSet, "1000", {}},
                   {"segment.bytes", kConfigOpDelete, std::nullopt, {}},
                   {"cleanup.policy", kConfigOpAppend, "compact", {}}},
                  {}}};
  r.validate_only = true;
  return r;
}

IncrementalAlterConfigsResponse MakeResponse(int16_t) {
  IncrementalAlterConfigsResponse r;
  r.throttle_time_ms = 1;
  r.results = {{0, std::nullopt, 2, "wire-admin-a", {}},
               {44, "policy says no", 2, "other", {}}};  // POLICY_VIOLATION
  return r;
}

TEST(IncrementalAlterConfigsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 1; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(IncrementalAlterConfigsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 1; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(IncrementalAlterConfigsTest, NonFlexibleLayout) {
  IncrementalAlterConfigsRequest r;
  r.resources = {{2, "t", {{"k", kConfigOpSubtract, "v", {}}}, {}}};
  // The operation sits between the name and the value.
  EXPECT_EQ(EncodeMessage(r, 0),
            Hex("00000001 02 0001 74 00000001 0001 6b 03 0001 76 00"));

  IncrementalAlterConfigsResponse resp;
  resp.results = {{0, std::nullopt, 2, "t", {}}};
  EXPECT_EQ(EncodeMessage(resp, 0),
            Hex("00000000 00000001 0000 ffff 02 0001 74"));
}

TEST(IncrementalAlterConfigsTest, FlexibleLayout) {
  IncrementalAlterConfigsRequest r;
  r.resources = {{2, "t", {{"k", kConfigOpSubtract, "v", {}}}, {}}};
  EXPECT_EQ(EncodeMessage(r, 1), Hex("02 02 0274 02 026b 03 0276 00 00 00 00"));

  IncrementalAlterConfigsResponse resp;
  resp.results = {{0, std::nullopt, 2, "t", {}}};
  EXPECT_EQ(EncodeMessage(resp, 1), Hex("00000000 02 0000 00 02 0274 00 00"));
}

}  // namespace
}  // namespace exactly::protocol
