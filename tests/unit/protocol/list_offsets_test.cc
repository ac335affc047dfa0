#include "protocol/messages/list_offsets.h"

#include <string>

#include "gtest/gtest.h"
#include "unit/protocol/message_test_util.h"

namespace exactly::protocol {
namespace {

using ::exactly::protocol::testing::ExpectRoundTrip;
using ::exactly::protocol::testing::ExpectTruncationFails;
using ::exactly::protocol::testing::Hex;
using ::exactly::protocol::testing::In;
using ::exactly::protocol::testing::kAllVersions;

constexpr int16_t kMaxVersion = 8;

ListOffsetsRequest MakeRequest(int16_t v) {
  ListOffsetsRequest r;
  r.replica_id = -1;
  if (In(v, 2)) r.isolation_level = 1;
  auto& t = r.topics.emplace_back();
  t.name = "orders";
  auto& p = t.partitions.emplace_back();
  p.index = 2;
  if (In(v, 4)) p.current_leader_epoch = 7;
  p.timestamp = kListOffsetsMaxTimestamp;
  if (In(v, 0, 0)) p.max_num_offsets = 3;
  return r;
}

ListOffsetsResponse MakeResponse(int16_t v) {
  ListOffsetsResponse r;
  if (In(v, 2)) r.throttle_time_ms = 5;
  auto& t = r.topics.emplace_back();
  t.name = "orders";
  auto& p = t.partitions.emplace_back();
  p.index = 2;
  p.error_code = 0;
  if (In(v, 0, 0)) p.old_style_offsets = {41};
  if (In(v, 1)) {
    p.timestamp = 3000;
    p.offset = 41;
  }
  if (In(v, 4)) p.leader_epoch = 7;
  return r;
}

TEST(ListOffsetsTest, RoundTripsEveryVersion) {
  for (int16_t v = 0; v <= kMaxVersion; ++v) {
    ExpectRoundTrip(MakeRequest(kAllVersions), MakeRequest(v), v);
    ExpectRoundTrip(MakeResponse(kAllVersions), MakeResponse(v), v);
  }
}

TEST(ListOffsetsTest, TruncatedInputFails) {
  for (int16_t v = 0; v <= kMaxVersion; ++v) {
    ExpectTruncationFails(MakeRequest(v), v);
    ExpectTruncationFails(MakeResponse(v), v);
  }
}

// v6+ is flexible: compact arrays and strings, a tagged-field count after each
// structure. v7 (max timestamp) and v8 (earliest local) change no field.
TEST(ListOffsetsTest, FlexibleLayoutFromVersion6) {
  ListOffsetsRequest r;
  r.isolation_level = 0;
  auto& t = r.topics.emplace_back();
  t.name = "t";
  auto& p = t.partitions.emplace_back();
  p.index = 0;
  p.timestamp = kListOffsetsMaxTimestamp;
  const std::string v5 =
      Hex("ffffffff 00 00000001 0001 74 00000001 00000000 ffffffff "
          "fffffffffffffffd");
  const std::string v7 = Hex(
      "ffffffff 00 02 02 74 02 00000000 ffffffff fffffffffffffffd 00 00 00");
  EXPECT_EQ(EncodeMessage(r, 5), v5);
  EXPECT_EQ(EncodeMessage(r, 6), v7);
  EXPECT_EQ(EncodeMessage(r, 7), v7);
  EXPECT_EQ(EncodeMessage(r, 8), v7);
}

}  // namespace
}  // namespace exactly::protocol
