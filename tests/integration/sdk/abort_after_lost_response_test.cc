// An abort that follows a lost produce response must not cost the next
// transaction its records.
//
// The schedule, made deterministic: a transaction sends two records to a
// partition; the broker appends them and drops the response (the client
// queues a retry, one second later); the transaction is then aborted before
// the retry goes out. librdkafka purges the queued retry and numbers the next
// batch as if the purged one had never been sent (rd_kafka_toppar_purge_queues
// advances the partition's epoch base msgid), so the next transaction's first
// batch carries the aborted batch's sequence numbers: a broker acknowledges it
// as a retried duplicate and never stores it (Kafka's rule). The SDK starts a
// new producer epoch before that transaction instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "sdk_test_util.h"

namespace exactly::testing {
namespace {

using ::testing::UnorderedElementsAre;

class AbortAfterLostResponseTest : public SdkTest {
 protected:
  ProducerOptions SlowRetryOpts(const std::string& txn_id) const {
    ProducerOptions o = TransactionalOpts(txn_id);
    // The retry of a batch whose response was lost waits this long: the
    // abort below comes first.
    o.properties["retry.backoff.ms"] = "1000";
    o.properties["linger.ms"] = "0";
    return o;
  }

  // A producer whose retries wait a second (SlowRetryOpts); null, with the
  // reason reported, if it cannot be created.
  std::unique_ptr<TransactionalProducer> NewProducer() const {
    auto producer = TransactionalProducer::Create(
        SlowRetryOpts(TestCluster::UniqueName("txn")));
    EXPECT_TRUE(producer.ok()) << producer.status();
    return producer.ok() ? std::move(*producer) : nullptr;
  }

  // Waits until the broker has appended a Produce request and dropped its
  // response, then a little longer so that the client has seen its
  // connection close.
  void WaitForDroppedResponse(size_t drops_before) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (CountDrops() <= drops_before) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "the broker never dropped a produce response";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  size_t CountDrops() const {
    size_t n = 0;
    for (const std::string& line : cluster_->broker()->faults().History()) {
      if (absl::StrContains(line, "dropped its response")) ++n;
    }
    return n;
  }

  // Sends two records to partition 0 and waits until their response is
  // dropped.
  void SendAndLoseTheResponse(Transaction& txn, const std::string& topic) {
    const size_t drops = CountDrops();
    cluster_->broker()->faults().DropProduceResponses(1);
    for (const char* v : {"aborted-1", "aborted-2"}) {
      ASSERT_TRUE(txn.Send({.topic = topic, .value = v, .partition = 0}).ok());
    }
    WaitForDroppedResponse(drops);
  }

  // One transaction of one record to partition 0.
  static absl::Status CommitOne(TransactionalProducer& p,
                                const std::string& topic, const char* value) {
    return p.Transact([&](Transaction& txn) {
      return txn.Send({.topic = topic, .value = value, .partition = 0});
    });
  }

  static absl::Status SendCommitted(Transaction& txn,
                                    const std::string& topic) {
    for (const char* v : {"committed-1", "committed-2"}) {
      if (absl::Status s =
              txn.Send({.topic = topic, .value = v, .partition = 0});
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
};

TEST_F(AbortAfterLostResponseTest, ExplicitAbortThenCommit) {
  SKIP_WITHOUT_FAULT_INJECTION();
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("lost-abort", 1);
  std::unique_ptr<TransactionalProducer> producer = NewProducer();
  ASSERT_NE(producer, nullptr);
  TransactionalProducer& p = *producer;

  ASSERT_TRUE(p.Begin().ok());
  const size_t drops = CountDrops();
  cluster_->broker()->faults().DropProduceResponses(1);
  for (const char* v : {"aborted-1", "aborted-2"}) {
    ASSERT_TRUE(p.Send({.topic = topic, .value = v, .partition = 0}).ok());
  }
  WaitForDroppedResponse(drops);
  ASSERT_TRUE(p.Abort().ok());

  ASSERT_TRUE(p.Begin().ok());
  for (const char* v : {"committed-1", "committed-2"}) {
    ASSERT_TRUE(p.Send({.topic = topic, .value = v, .partition = 0}).ok());
  }
  absl::Status s = p.Commit();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(p.stats().epoch_bumps, 1u);
  EXPECT_THAT(Values(ReadCommitted(topic, 1)),
              UnorderedElementsAre("committed-1", "committed-2"));
}

TEST_F(AbortAfterLostResponseTest, TransactFunctionErrorThenCommit) {
  SKIP_WITHOUT_FAULT_INJECTION();
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("lost-fn", 1);
  std::unique_ptr<TransactionalProducer> producer = NewProducer();
  ASSERT_NE(producer, nullptr);
  TransactionalProducer& p = *producer;

  // fn's own error aborts the transaction and is returned.
  absl::Status s = p.Transact([&](Transaction& txn) {
    SendAndLoseTheResponse(txn, topic);
    return absl::AbortedError("the application changed its mind");
  });
  ASSERT_EQ(s.code(), absl::StatusCode::kAborted) << s;

  s = p.Transact([&](Transaction& txn) { return SendCommitted(txn, topic); });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(p.stats().epoch_bumps, 1u);
  EXPECT_THAT(Values(ReadCommitted(topic, 1)),
              UnorderedElementsAre("committed-1", "committed-2"));
}

TEST_F(AbortAfterLostResponseTest, TransactRerunAfterAnAbortableError) {
  SKIP_WITHOUT_FAULT_INJECTION();
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("lost-rerun", 2);
  std::unique_ptr<TransactionalProducer> producer = NewProducer();
  ASSERT_NE(producer, nullptr);
  TransactionalProducer& p = *producer;

  // Run 1: records to partition 0 (response lost), then a record to
  // partition 1 whose AddPartitionsToTxn fails with an abortable error:
  // librdkafka purges the queued retry itself, Transact aborts and runs fn
  // again. Run 2 writes the same records again and commits.
  int runs = 0;
  absl::Status s = p.Transact([&](Transaction& txn) -> absl::Status {
    ++runs;
    if (runs == 1) {
      SendAndLoseTheResponse(txn, topic);
      cluster_->broker()->faults().FailRequests(
          {.api_key = api::kAddPartitionsToTxn},
          /*TOPIC_AUTHORIZATION_FAILED*/ 29, 1);
      if (absl::Status sent =
              txn.Send({.topic = topic, .value = "aborted-3", .partition = 1});
          !sent.ok()) {
        return sent;
      }
      return absl::OkStatus();  // the commit fails: abortable
    }
    return SendCommitted(txn, topic);
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(p.stats().epoch_bumps, 1u);
  EXPECT_THAT(Values(ReadCommitted(topic, 2)),
              UnorderedElementsAre("committed-1", "committed-2"));
}

// A batch the broker refused (not stored) leaves a gap: librdkafka 2.0.2
// does not number the next batch with the refused one's sequences, so the
// broker answers the rerun's batch OUT_OF_ORDER_SEQUENCE_NUMBER. librdkafka
// copes with that by bumping the epoch itself, unless the answer is lost: its
// retry then reads as a rewound sequence, which is fatal. The SDK starts a
// new epoch after such an abort instead.
TEST_F(AbortAfterLostResponseTest, TransactRerunAfterARefusedBatch) {
  SKIP_WITHOUT_FAULT_INJECTION();
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("refused-rerun", 1);
  std::unique_ptr<TransactionalProducer> producer = NewProducer();
  ASSERT_NE(producer, nullptr);
  TransactionalProducer& p = *producer;
  // The broker knows this producer's sequences from here on.
  absl::Status s = CommitOne(p, topic, "first");
  ASSERT_TRUE(s.ok()) << s;

  int runs = 0;
  s = p.Transact([&](Transaction& txn) -> absl::Status {
    ++runs;
    if (runs == 1) {
      cluster_->broker()->faults().FailRequests({.api_key = api::kProduce},
                                                /*MESSAGE_TOO_LARGE*/ 10, 1);
      return txn.Send({.topic = topic, .value = "refused", .partition = 0});
    }
    cluster_->broker()->faults().DropProduceResponses(1);
    return SendCommitted(txn, topic);
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(p.stats().epoch_bumps, 1u);
  EXPECT_THAT(Values(ReadCommitted(topic, 1)),
              UnorderedElementsAre("first", "committed-1", "committed-2"));
}

// Abort() after the transaction's only AddPartitionsToTxn was refused:
// librdkafka still sends EndTxn(abort), the coordinator has no transaction
// and answers INVALID_TXN_STATE (as Kafka does), which librdkafka makes
// fatal. The Processor and applications call Abort() directly (not only
// Transact), so Abort() itself goes on with a fresh instance.
TEST_F(AbortAfterLostResponseTest, AbortWithNothingAddedIsNotFatal) {
  SKIP_WITHOUT_FAULT_INJECTION();
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("nothing-added", 1);
  std::unique_ptr<TransactionalProducer> producer = NewProducer();
  ASSERT_NE(producer, nullptr);
  TransactionalProducer& p = *producer;
  absl::Status s = CommitOne(p, topic, "first");
  ASSERT_TRUE(s.ok()) << s;

  ASSERT_TRUE(p.Begin().ok());
  cluster_->broker()->faults().FailRequests(
      {.api_key = api::kAddPartitionsToTxn},
      /*TOPIC_AUTHORIZATION_FAILED*/ 29, 1);
  ASSERT_TRUE(
      p.Send({.topic = topic, .value = "refused", .partition = 0}).ok());
  s = p.Commit();
  ASSERT_EQ(NextTxnAction(s), TxnAction::kAbortAndRerun) << s;
  s = p.Abort();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_FALSE(p.in_transaction());

  ASSERT_TRUE(p.Begin().ok());
  ASSERT_TRUE(p.Send({.topic = topic, .value = "second", .partition = 0}).ok());
  s = p.Commit();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(Values(ReadCommitted(topic, 1)),
              UnorderedElementsAre("first", "second"));
}

}  // namespace
}  // namespace exactly::testing
