// Found by ClusterEosTest.ProcessorUnderGroupCoordinatorKills (issue 20): a
// TxnOffsetCommit that arrives at the group coordinator AFTER its
// transaction was aborted (the coordinator timed it out and fenced the
// producer, and the ABORT marker already reached the group) is staged as
// pending offsets that no marker will ever clear. OffsetFetch with
// require_stable (every read_committed consumer, so every Processor) then
// answers UNSTABLE_OFFSET_COMMIT for that partition forever: the group never
// starts again. In the cluster run the late request is librdkafka's
// send_offsets_to_transaction retried when the killed group coordinator's
// broker came back, after the transaction coordinator's abort marker.
//
// Kafka (KIP-890, 3.6+) verifies a TxnOffsetCommit with the transaction
// coordinator, so the late request is refused; the bundled broker does the
// same (handlers/txn_offset_commit.cc).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "exactly/broker/broker.h"
#include "protocol/messages/all.h"
#include "support/raw_call.h"

namespace exactly::eos {
namespace {

using testing::Call;

constexpr int16_t kUnstableOffsetCommit = 88;

TEST(LateTxnOffsetCommitTest, OffsetsOfAnAbortedTransactionDoNotHangTheGroup) {
  absl::StatusOr<std::unique_ptr<broker::Broker>> started =
      broker::Broker::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  broker::Broker& broker = **started;
  ASSERT_TRUE(broker.CreateTopic("input", 1).ok());
  const uint16_t port = broker.port();
  const std::string txn = "late-txn";
  const std::string group = "late-group";

  protocol::InitProducerIdRequest init;
  init.transactional_id = txn;
  init.transaction_timeout_ms = 60000;
  auto id = Call<protocol::InitProducerIdResponse>(port, 3, init);
  ASSERT_EQ(id.error_code, 0);

  protocol::AddOffsetsToTxnRequest add;
  add.transactional_id = txn;
  add.producer_id = id.producer_id;
  add.producer_epoch = id.producer_epoch;
  add.group_id = group;
  ASSERT_EQ(Call<protocol::AddOffsetsToTxnResponse>(port, 0, add).error_code,
            0);

  // A new instance of the producer (a plain InitProducerId, no producer id
  // and epoch): the open transaction is aborted (its ABORT marker written to
  // the group) and the old epoch fenced. Retried while the abort completes
  // (CONCURRENT_TRANSACTIONS). (A KIP-360 bump with the old id and epoch
  // would be refused once the abort fenced that epoch, as on Kafka:
  // tests/conformance/test_transactions.py.)
  protocol::InitProducerIdRequest bump = init;
  protocol::InitProducerIdResponse bumped;
  for (int i = 0; i < 200; ++i) {
    bumped = Call<protocol::InitProducerIdResponse>(port, 3, bump);
    if (bumped.error_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(bumped.error_code, 0);
  ASSERT_GT(bumped.producer_epoch, id.producer_epoch);

  // The old instance's TxnOffsetCommit, late.
  protocol::TxnOffsetCommitRequest late;
  late.transactional_id = txn;
  late.group_id = group;
  late.producer_id = id.producer_id;
  late.producer_epoch = id.producer_epoch;
  late.topics.push_back(
      {.name = "input", .partitions = {{.index = 0, .committed_offset = 5}}});
  auto answer = Call<protocol::TxnOffsetCommitResponse>(port, 2, late);
  ASSERT_EQ(answer.topics.size(), 1u);
  const int16_t late_error = answer.topics[0].partitions[0].error_code;
  // The producer's epoch was bumped by the new instance: fenced, as Kafka's
  // verification answers it.
  constexpr int16_t kInvalidProducerEpoch = 47;
  EXPECT_EQ(late_error, kInvalidProducerEpoch);

  // What a read_committed consumer of the group asks when it starts.
  protocol::OffsetFetchRequest fetch;
  fetch.group_id = group;
  fetch.topics = std::vector<protocol::OffsetFetchRequest::Topic>{
      {.name = "input", .partition_indexes = {0}}};
  fetch.require_stable = true;
  auto fetched = Call<protocol::OffsetFetchResponse>(port, 7, fetch);
  ASSERT_EQ(fetched.topics.size(), 1u);
  EXPECT_NE(fetched.topics[0].partitions[0].error_code, kUnstableOffsetCommit)
      << "the late TxnOffsetCommit (answered " << late_error
      << ") left pending offsets that no marker will clear: the group's "
         "read_committed consumers cannot fetch their offsets";
}

}  // namespace
}  // namespace exactly::eos
