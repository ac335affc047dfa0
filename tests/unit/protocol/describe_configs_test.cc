#include "protocol/messages/describe_configs.h"

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

DescribeConfigsRequest MakeRequest(int16_t v) {
  DescribeConfigsRequest r;
  r.resources = {{2, "wire-admin-a", {{"retention.ms", "cleanup.policy"}}, {}},
                 {4, "1", std::nullopt, {}}};
  if (In(v, 1)) r.include_synonyms = true;
  if (In(v, 3)) r.include_documentation = true;
  return r;
}

DescribeConfigsResponse MakeResponse(int16_t v) {
  DescribeConfigsResponse r;
  r.throttle_time_ms = 4;
  DescribeConfigsResponse::Config retention;
  retention.name = "retention.ms";
  retention.value = "604800000";
  if (In(v, 0, 0)) retention.is_default = true;
  if (In(v, 1)) {
    retention.config_source = 5;  // DEFAULT_CONFIG
    retention.synonyms = {{"retention.ms", "604800000", 5, {}},
                          {"log.retention.hours", std::nullopt, 4, {}}};
  }
  if (In(v, 3)) {
    retention.config_type = 5;  // LONG
    retention.documentation = "How long to keep a log segment.";
  }
  DescribeConfigsResponse::Config secret;
  secret.name = "sasl.jaas.config";
  secret.read_only = true;
  secret.is_sensitive = true;
  if (In(v, 1)) secret.config_source = 4;  // STATIC_BROKER_CONFIG
  r.results = {{0, std::nullopt, 2, "wire-admin-a", {retention, secret}, {}},
               {3, "unknown topic", 2, "gone", {}, {}}};
  return r;
}

TEST(DescribeConfigsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= 4; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(DescribeConfigsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= 4; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

DescribeConfigsResponse TinyResponse() {
  DescribeConfigsResponse r;
  DescribeConfigsResponse::Config c;
  c.name = "k";
  c.value = "v";
  c.is_default = true;
  r.results = {{0, std::nullopt, 2, "t", {c}, {}}};
  return r;
}

TEST(DescribeConfigsTest, NonFlexibleLayout) {
  DescribeConfigsRequest r;
  r.resources = {{2, "t", std::nullopt, {}}};
  r.include_synonyms = true;
  // type, name, null keys (all configs).
  EXPECT_EQ(EncodeMessage(r, 0), Hex("00000001 02 0001 74 ffffffff"));
  EXPECT_EQ(EncodeMessage(r, 1), Hex("00000001 02 0001 74 ffffffff 01"));

  // v0: name, value, read_only, is_default, is_sensitive.
  EXPECT_EQ(EncodeMessage(TinyResponse(), 0),
            Hex("00000000 00000001 0000 ffff 02 0001 74 00000001 0001 6b "
                "0001 76 00 01 00"));
  // v1: is_default gives way to config_source (-1) and synonyms follow.
  EXPECT_EQ(EncodeMessage(TinyResponse(), 1),
            Hex("00000000 00000001 0000 ffff 02 0001 74 00000001 0001 6b "
                "0001 76 00 ff 00 00000000"));
}

TEST(DescribeConfigsTest, FlexibleLayout) {
  DescribeConfigsRequest r;
  r.resources = {{2, "t", std::nullopt, {}}};
  r.include_synonyms = true;
  r.include_documentation = true;
  EXPECT_EQ(EncodeMessage(r, 4), Hex("02 02 0274 00 00 01 01 00"));

  // v4 config: name, value, read_only, source, sensitive, no synonyms, type,
  // null documentation, tags.
  EXPECT_EQ(EncodeMessage(TinyResponse(), 4),
            Hex("00000000 02 0000 00 02 0274 02 026b 0276 00 ff 00 01 00 00 "
                "00 00 00"));
}

TEST(DescribeConfigsTest, CapturedFrames) {
  if (WireSamplesDir().empty()) {
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  }
  std::vector<CapturedRequest> captured =
      CapturedRequests(ApiKey::kDescribeConfigs);
  ASSERT_FALSE(captured.empty());
  ExpectEveryCapturedRoundTrips<DescribeConfigsRequest>(captured);

  DescribeConfigsRequest topic = DecodeCaptured<DescribeConfigsRequest>(
      captured, "librdkafka-2.0.2-describe_configs-v1-1.bin");
  ASSERT_EQ(topic.resources.size(), 1u);
  EXPECT_EQ(topic.resources[0].resource_type, 2);
  EXPECT_EQ(topic.resources[0].resource_name, "wire-admin-a");
  EXPECT_TRUE(topic.include_synonyms);

  DescribeConfigsRequest broker = DecodeCaptured<DescribeConfigsRequest>(
      captured, "librdkafka-2.0.2-describe_configs-v1-2.bin");
  ASSERT_EQ(broker.resources.size(), 1u);
  EXPECT_EQ(broker.resources[0].resource_type, 4);
  EXPECT_EQ(broker.resources[0].resource_name, "1");

  DescribeConfigsRequest kp = DecodeCaptured<DescribeConfigsRequest>(
      captured, "kafka-python-2.0.2-describe_configs-v2-2.bin");
  ASSERT_EQ(kp.resources.size(), 1u);
  EXPECT_EQ(kp.resources[0].resource_type, 4);
  EXPECT_FALSE(kp.include_synonyms);
}

}  // namespace
}  // namespace exactly::protocol
