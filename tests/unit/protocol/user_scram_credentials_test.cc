// DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), v0
// (flexible): round trips, truncation, and the byte layout written out from
// Kafka's JSON schemas (compact strings, bytes and arrays, tagged fields).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/describe_user_scram_credentials.h"
#include "unit/protocol/message_test_util.h"

namespace exactly::protocol {
namespace {

using ::exactly::protocol::testing::ExpectRoundTrip;
using ::exactly::protocol::testing::ExpectTruncationFails;
using ::exactly::protocol::testing::Hex;

DescribeUserScramCredentialsRequest DescribeRequest() {
  DescribeUserScramCredentialsRequest r;
  r.users = std::vector<DescribeUserScramCredentialsRequest::User>{
      {"alice", {}}, {"bob", {}}};
  return r;
}

DescribeUserScramCredentialsResponse DescribeResponse() {
  DescribeUserScramCredentialsResponse r;
  r.throttle_time_ms = 3;
  r.error_message = "";
  r.results = {{"alice", 0, "", {{1, 4096, {}}, {2, 8192, {}}}, {}},
               {"bob", 91, "not found", {}, {}}};
  return r;
}

AlterUserScramCredentialsRequest AlterRequest() {
  AlterUserScramCredentialsRequest r;
  r.deletions = {{"alice", 2, {}}};
  r.upsertions = {{"bob", 1, 4096, "salt", std::string(32, 'k'), {}}};
  return r;
}

AlterUserScramCredentialsResponse AlterResponse() {
  AlterUserScramCredentialsResponse r;
  r.results = {{"alice", 0, std::nullopt, {}},
               {"bob", 93, "Too few iterations", {}}};
  return r;
}

TEST(UserScramCredentialsTest, RoundTrips) {
  ExpectRoundTrip(DescribeRequest(), DescribeRequest(), 0);
  ExpectRoundTrip(DescribeResponse(), DescribeResponse(), 0);
  ExpectRoundTrip(AlterRequest(), AlterRequest(), 0);
  ExpectRoundTrip(AlterResponse(), AlterResponse(), 0);
  DescribeUserScramCredentialsRequest all;  // null users
  ExpectRoundTrip(all, all, 0);
}

TEST(UserScramCredentialsTest, TruncatedInputFails) {
  ExpectTruncationFails(DescribeRequest(), 0);
  ExpectTruncationFails(DescribeResponse(), 0);
  ExpectTruncationFails(AlterRequest(), 0);
  ExpectTruncationFails(AlterResponse(), 0);
}

TEST(UserScramCredentialsTest, FlexibleLayout) {
  DescribeUserScramCredentialsRequest all;
  EXPECT_EQ(EncodeMessage(all, 0), Hex("00 00"));  // null users
  DescribeUserScramCredentialsRequest one;
  one.users = std::vector<DescribeUserScramCredentialsRequest::User>{{"a", {}}};
  EXPECT_EQ(EncodeMessage(one, 0), Hex("02 0261 00 00"));
  DescribeUserScramCredentialsResponse described;
  described.results = {{"a", 0, "", {{1, 4096, {}}}, {}}};
  EXPECT_EQ(EncodeMessage(described, 0),
            Hex("00000000 0000 00 02 0261 0000 01 02 01 00001000 00 00 00"));

  AlterUserScramCredentialsRequest alter;
  alter.deletions = {{"a", 1, {}}};
  alter.upsertions = {{"b", 2, 4096, "s", "p", {}}};
  EXPECT_EQ(EncodeMessage(alter, 0),
            Hex("02 0261 01 00 02 0262 02 00001000 0273 0270 00 00"));
  AlterUserScramCredentialsResponse altered;
  altered.results = {{"a", 93, std::nullopt, {}}};
  EXPECT_EQ(EncodeMessage(altered, 0), Hex("00000000 02 0261 005d 00 00 00"));
}

}  // namespace
}  // namespace exactly::protocol
