// A transactional batch no transaction knows of (issue 18, finding 4): with
// KIP-890 verification (the default) it is refused with INVALID_TXN_STATE and
// the partition's last stable offset keeps moving; without it the batch opens
// a transaction nobody ends, and Broker::AbortTransaction ends it.
#include <memory>
#include <string>

#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "support/raw_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawClient;
using protocol::ErrorCode;

constexpr char kTopic[] = "verified";

struct Stray {
  std::unique_ptr<Broker> broker;
  int64_t producer_id = -1;
  int16_t error = 0;
};

// A named producer that never adds the partition sends a transactional batch,
// then an ordinary producer writes one record.
Stray SendStray(bool verification) {
  Stray s;
  BrokerOptions options;
  options.transaction_partition_verification = verification;
  auto b = Broker::Start(options);
  EXPECT_TRUE(b.ok()) << b.status();
  if (!b.ok()) return s;
  s.broker = std::move(*b);
  EXPECT_TRUE(s.broker->CreateTopic(kTopic, 1).ok());
  RawClient client(s.broker->port(), "verification-test");
  protocol::InitProducerIdRequest init;
  init.transactional_id = "stray";
  init.transaction_timeout_ms = 60000;
  auto id = client.Call<protocol::InitProducerIdResponse>(init, 1);
  EXPECT_EQ(id.error_code, 0);
  s.producer_id = id.producer_id;
  protocol::RecordBatchSpec spec;
  spec.attributes = protocol::kAttrTransactional;
  spec.producer_id = id.producer_id;
  spec.producer_epoch = id.producer_epoch;
  spec.base_sequence = 0;
  spec.base_timestamp = 1700000000000;
  absl::StatusOr<std::string> batch =
      protocol::BuildRecordBatch(spec, {{"k", "stray", {}, 0}});
  EXPECT_TRUE(batch.ok()) << batch.status();
  protocol::ProduceRequest request;
  request.transactional_id = "stray";
  request.acks = -1;
  request.timeout_ms = 5000;
  auto& t = request.topics.emplace_back();
  t.name = kTopic;
  t.partitions.push_back({0, {false, {*batch}, {}}, {}});
  auto response = client.Call<protocol::ProduceResponse>(request, 7);
  s.error = response.topics.at(0).partitions.at(0).error_code;

  protocol::RecordBatchSpec plain;
  plain.base_timestamp = 1700000000000;
  absl::StatusOr<std::string> plain_batch =
      protocol::BuildRecordBatch(plain, {{"k", "plain", {}, 0}});
  EXPECT_TRUE(plain_batch.ok());
  protocol::ProduceRequest ordinary;
  ordinary.acks = -1;
  ordinary.timeout_ms = 5000;
  auto& ot = ordinary.topics.emplace_back();
  ot.name = kTopic;
  ot.partitions.push_back({0, {false, {*plain_batch}, {}}, {}});
  RawClient other(s.broker->port(), "verification-test-plain");
  auto second = other.Call<protocol::ProduceResponse>(ordinary, 7);
  EXPECT_EQ(second.topics.at(0).partitions.at(0).error_code, 0);
  return s;
}

TEST(TransactionVerificationTest, AStrayTransactionalBatchIsRefused) {
  Stray s = SendStray(/*verification=*/true);
  ASSERT_NE(s.broker, nullptr);
  EXPECT_EQ(s.error, static_cast<int16_t>(ErrorCode::kInvalidTxnState));
  auto offsets = s.broker->Offsets(kTopic, 0);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_EQ(offsets->high_watermark, 1);
  EXPECT_EQ(offsets->last_stable_offset, 1) << "read_committed is held back";
}

TEST(TransactionVerificationTest, WithoutVerificationItHangsUntilAborted) {
  Stray s = SendStray(/*verification=*/false);
  ASSERT_NE(s.broker, nullptr);
  EXPECT_EQ(s.error, 0);
  auto offsets = s.broker->Offsets(kTopic, 0);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_EQ(offsets->high_watermark, 2);
  EXPECT_EQ(offsets->last_stable_offset, 0) << "the stray batch holds it";

  absl::StatusOr<int64_t> marker =
      s.broker->AbortTransaction(kTopic, 0, s.producer_id);
  ASSERT_TRUE(marker.ok()) << marker.status();
  EXPECT_EQ(*marker, 2);
  offsets = s.broker->Offsets(kTopic, 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->last_stable_offset, 3);
  EXPECT_EQ(
      s.broker->AbortTransaction(kTopic, 0, s.producer_id).status().code(),
      absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace exactly::broker
