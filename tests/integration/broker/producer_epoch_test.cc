// The transaction coordinator's InitProducerId epoch rules (KIP-360) and
// EndTxn while markers are written, as Kafka 3.9 answers them (held side by
// side with Kafka in tests/conformance/test_transactions.py): a bump with the
// current epoch moves to the next one and its retry gets the same answer, a
// fenced instance's bump is PRODUCER_FENCED, a bump for an unknown
// transactional id starts it afresh, an id without an epoch is INVALID_REQUEST,
// and EndTxn of either outcome during PrepareCommit is CONCURRENT_TRANSACTIONS.
#include <memory>
#include <string>

#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "support/raw_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawClient;
using protocol::ErrorCode;

constexpr char kTopic[] = "epochs";

int16_t Code(ErrorCode e) { return static_cast<int16_t>(e); }

class ProducerEpochTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto b = Broker::Start(BrokerOptions{});
    ASSERT_TRUE(b.ok()) << b.status();
    broker_ = std::move(*b);
    ASSERT_TRUE(broker_->CreateTopic(kTopic, 1).ok());
    client_ = std::make_unique<RawClient>(broker_->port(), "epoch-test");
  }

  // InitProducerId v4; producer id and epoch -1 unless a bump is asked for.
  protocol::InitProducerIdResponse Init(const std::string& id,
                                        int64_t producer_id = -1,
                                        int16_t epoch = -1) {
    protocol::InitProducerIdRequest init;
    init.transactional_id = id;
    init.transaction_timeout_ms = 60000;
    init.producer_id = producer_id;
    init.producer_epoch = epoch;
    return client_->Call<protocol::InitProducerIdResponse>(init, 4);
  }

  std::unique_ptr<Broker> broker_;
  std::unique_ptr<RawClient> client_;
};

TEST_F(ProducerEpochTest, BumpWithTheCurrentEpochAndItsRetry) {
  auto first = Init("bumper");
  ASSERT_EQ(first.error_code, 0);
  auto bumped = Init("bumper", first.producer_id, first.producer_epoch);
  ASSERT_EQ(bumped.error_code, 0);
  EXPECT_EQ(bumped.producer_id, first.producer_id);
  EXPECT_EQ(bumped.producer_epoch, first.producer_epoch + 1);
  // The same request again (its answer was lost): the same epoch, no bump.
  auto retried = Init("bumper", first.producer_id, first.producer_epoch);
  ASSERT_EQ(retried.error_code, 0);
  EXPECT_EQ(retried.producer_epoch, bumped.producer_epoch);
  // Neither the current epoch nor the one it bumped from.
  EXPECT_EQ(
      Init("bumper", first.producer_id, bumped.producer_epoch + 5).error_code,
      Code(ErrorCode::kProducerFenced));
  EXPECT_EQ(
      Init("bumper", first.producer_id + 1, bumped.producer_epoch).error_code,
      Code(ErrorCode::kProducerFenced));
}

TEST_F(ProducerEpochTest, FencedInstanceCannotPassForARetry) {
  auto first = Init("zombie");
  ASSERT_EQ(first.error_code, 0);
  auto second = Init("zombie");  // a new instance: no id, no epoch
  ASSERT_EQ(second.error_code, 0);
  EXPECT_EQ(second.producer_epoch, first.producer_epoch + 1);
  // Before, the first instance's epoch was remembered as the one bumped from,
  // and its bump was answered with the second instance's epoch.
  EXPECT_EQ(Init("zombie", first.producer_id, first.producer_epoch).error_code,
            Code(ErrorCode::kProducerFenced));
}

TEST_F(ProducerEpochTest, BumpForAnUnknownTransactionalIdStartsIt) {
  auto answer = Init("expired", 123456789, 7);
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_NE(answer.producer_id, 123456789);
  EXPECT_EQ(answer.producer_epoch, 0);
}

TEST_F(ProducerEpochTest, IdWithoutEpochIsInvalidRequest) {
  auto first = Init("half");
  ASSERT_EQ(first.error_code, 0);
  EXPECT_EQ(Init("half", first.producer_id, -1).error_code,
            Code(ErrorCode::kInvalidRequest));
  EXPECT_EQ(Init("half", -1, first.producer_epoch).error_code,
            Code(ErrorCode::kInvalidRequest));
  protocol::InitProducerIdRequest idempotent;  // no transactional id
  idempotent.transaction_timeout_ms = 60000;
  idempotent.producer_id = first.producer_id;
  EXPECT_EQ(
      client_->Call<protocol::InitProducerIdResponse>(idempotent, 4).error_code,
      Code(ErrorCode::kInvalidRequest));
}

TEST_F(ProducerEpochTest, EndTxnWhileTheCommitMarkersAreWritten) {
  auto id = Init("ending");
  ASSERT_EQ(id.error_code, 0);
  protocol::AddPartitionsToTxnRequest add;
  add.transactional_id = "ending";
  add.producer_id = id.producer_id;
  add.producer_epoch = id.producer_epoch;
  add.topics.push_back({kTopic, {0}, {}});
  auto added = client_->Call<protocol::AddPartitionsToTxnResponse>(add, 3);
  ASSERT_EQ(added.topics.at(0).partitions.at(0).error_code, 0);
  protocol::EndTxnRequest end;
  end.transactional_id = "ending";
  end.producer_id = id.producer_id;
  end.producer_epoch = id.producer_epoch;
  end.committed = true;
  broker_->faults().HoldTransactionMarkers(1);  // stays in PrepareCommit
  ASSERT_EQ(client_->Call<protocol::EndTxnResponse>(end, 3).error_code, 0);
  EXPECT_EQ(client_->Call<protocol::EndTxnResponse>(end, 3).error_code,
            Code(ErrorCode::kConcurrentTransactions));
  end.committed = false;  // was INVALID_TXN_STATE
  EXPECT_EQ(client_->Call<protocol::EndTxnResponse>(end, 3).error_code,
            Code(ErrorCode::kConcurrentTransactions));
}

}  // namespace
}  // namespace exactly::broker
