#include "protocol/messages/find_coordinator.h"

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

FindCoordinatorRequest MakeRequest(int16_t v) {
  FindCoordinatorRequest r;
  if (In(v, 0, 3)) r.key = "wire-group";
  if (In(v, 1)) r.key_type = kCoordinatorKeyTransaction;
  if (In(v, 4)) r.coordinator_keys = {"txn-a", "txn-b"};
  return r;
}

FindCoordinatorResponse MakeResponse(int16_t v) {
  FindCoordinatorResponse r;
  if (In(v, 1)) r.throttle_time_ms = 7;
  if (In(v, 0, 3)) {
    r.error_code = 15;
    if (In(v, 1)) r.error_message = "loading";
    r.node_id = 2;
    r.host = "broker-2";
    r.port = 9092;
  }
  if (In(v, 4)) {
    r.coordinators = {
        {"txn-a", 1, "broker-1", 9092, 0, std::nullopt, {}},
        {"txn-b", -1, "", -1, 15, "not available", {}},
    };
  }
  return r;
}

TEST(FindCoordinatorTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 4; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(FindCoordinatorTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 4; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

TEST(FindCoordinatorTest, NonFlexibleLayout) {
  FindCoordinatorRequest r;
  r.key = "g";
  r.key_type = kCoordinatorKeyTransaction;
  // int16 string length, then the key type.
  EXPECT_EQ(EncodeMessage(r, 2), Hex("0001 67 01"));
  EXPECT_EQ(EncodeMessage(r, 0), Hex("0001 67"));

  FindCoordinatorResponse resp;
  resp.throttle_time_ms = 1;
  resp.node_id = 3;
  resp.host = "h";
  resp.port = 9092;
  // throttle, error, null message (int16 -1), node, host, port.
  EXPECT_EQ(EncodeMessage(resp, 1),
            Hex("00000001 0000 ffff 00000003 0001 68 00002384"));
}

TEST(FindCoordinatorTest, FlexibleLayout) {
  FindCoordinatorRequest r;
  r.key = "g";
  r.key_type = kCoordinatorKeyGroup;
  // Compact string (length+1), key type, empty tag section.
  EXPECT_EQ(EncodeMessage(r, 3), Hex("02 67 00 00"));
  r.coordinator_keys = {"a", "b"};
  // v4 drops Key: key type, compact array of two compact strings, tags.
  EXPECT_EQ(EncodeMessage(r, 4), Hex("00 03 0261 0262 00"));
  EXPECT_EQ(r.Keys(4), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.Keys(3), (std::vector<std::string>{"g"}));

  FindCoordinatorResponse resp;
  resp.coordinators.push_back({"a", 1, "h", 9092, 0, std::nullopt, {}});
  // throttle; one coordinator: key, node, host, port, error, null compact
  // string (0), its tags; the top-level tags.
  EXPECT_EQ(EncodeMessage(resp, 4),
            Hex("00000000 02 0261 00000001 0268 00002384 0000 00 00 00"));
}

TEST(FindCoordinatorTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kFindCoordinator);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<FindCoordinatorRequest>(captured);

  FindCoordinatorRequest group = DecodeCaptured<FindCoordinatorRequest>(
      captured, "librdkafka-2.0.2-find_coordinator-v2-1.bin");
  EXPECT_EQ(group.key, "wire-txn-group");
  EXPECT_EQ(group.key_type, kCoordinatorKeyGroup);

  FindCoordinatorRequest txn = DecodeCaptured<FindCoordinatorRequest>(
      captured, "librdkafka-2.0.2-find_coordinator-v2-2.bin");
  EXPECT_EQ(txn.key, "wire-txn-1");
  EXPECT_EQ(txn.key_type, kCoordinatorKeyTransaction);

  FindCoordinatorRequest v0 = DecodeCaptured<FindCoordinatorRequest>(
      captured, "kafka-python-2.0.2-find_coordinator-v0-1.bin");
  EXPECT_EQ(v0.key, "wire-kp-group");
  EXPECT_EQ(v0.Keys(0), std::vector<std::string>{"wire-kp-group"});
}

}  // namespace
}  // namespace exactly::protocol
