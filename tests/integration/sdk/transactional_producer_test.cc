// The transactional producer against a cluster: Transact's rules (retry,
// abort and re-run, give up), fencing, rebuilding, and what read_committed
// consumers see.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

#include "sdk_test_util.h"

namespace exactly::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class TransactionalProducerTest : public SdkTest {
 protected:
  std::unique_ptr<TransactionalProducer> MakeProducer(
      const std::string& txn_id, ProducerOptions* options = nullptr) {
    ProducerOptions o =
        options != nullptr ? *options : TransactionalOpts(txn_id);
    o.transactional_id = txn_id;
    auto producer = TransactionalProducer::Create(o);
    EXPECT_TRUE(producer.ok()) << producer.status();
    return producer.ok() ? std::move(*producer) : nullptr;
  }

  // A transaction function writing "a", "b", "c" and counting its runs.
  auto WriteAbc(const std::string& topic, int* runs) {
    return [topic, runs](Transaction& txn) -> absl::Status {
      ++*runs;
      for (const char* v : {"a", "b", "c"}) {
        if (absl::Status s = txn.Send({.topic = topic, .key = v, .value = v});
            !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    };
  }
};

TEST_F(TransactionalProducerTest, TransactCommitsTheRecords) {
  const std::string topic = NewTopic("t-commit");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  int runs = 0;
  absl::Status s = producer->Transact(WriteAbc(topic, &runs));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(producer->in_transaction());
  EXPECT_EQ(producer->stats().committed, 1u);
  EXPECT_THAT(Values(ReadCommitted(topic, 3)),
              UnorderedElementsAre("a", "b", "c"));
}

// Each commit lands in one bucket of the latency histogram, and its time in
// the sum.
TEST_F(TransactionalProducerTest, CommitLatencyIsCountedPerCommit) {
  const std::string topic = NewTopic("t-latency");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  int runs = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(producer->Transact(WriteAbc(topic, &runs)).ok());
  }
  ASSERT_TRUE(producer->Begin().ok());
  ASSERT_TRUE(producer->Abort().ok());
  const TransactionStats stats = producer->stats();
  EXPECT_EQ(stats.committed, 3u);
  EXPECT_EQ(stats.aborted, 1u);
  uint64_t counted = 0;
  for (uint64_t n : stats.commit_latency_counts) counted += n;
  EXPECT_EQ(counted, 3u);
  EXPECT_GT(stats.commit_latency_sum.count(), 0);
  EXPECT_FALSE(stats.fenced);
}

TEST_F(TransactionalProducerTest, DeliveryCallbacksHaveRunWhenCommitReturns) {
  const std::string topic = NewTopic("t-dr");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  std::atomic<int> delivered{0};
  absl::Status s = producer->Transact([&](Transaction& txn) {
    for (int i = 0; i < 50; ++i) {
      absl::Status sent = txn.Send({.topic = topic, .value = "x"},
                                   [&](const DeliveryReport& r) {
                                     EXPECT_TRUE(r.status.ok()) << r.status;
                                     ++delivered;
                                   });
      if (!sent.ok()) return sent;
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(delivered.load(), 50);
}

TEST_F(TransactionalProducerTest, TheSingleVerbs) {
  const std::string topic = NewTopic("t-verbs");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  EXPECT_EQ(producer->Send({.topic = topic, .value = "x"}).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(producer->Begin().ok());
  EXPECT_TRUE(producer->in_transaction());
  absl::Status again = producer->Begin();
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(NextTxnAction(again), TxnAction::kGiveUp);
  ASSERT_TRUE(producer->Send({.topic = topic, .value = "one"}).ok());
  ASSERT_TRUE(producer->Commit().ok());
  EXPECT_FALSE(producer->in_transaction());
  ASSERT_TRUE(producer->Begin().ok());
  ASSERT_TRUE(producer->Abort().ok());
  EXPECT_EQ(producer->stats().committed, 1u);
  EXPECT_EQ(producer->stats().aborted, 1u);
}

TEST_F(TransactionalProducerTest, AbortedRecordsAreNeverSeen) {
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("t-abort");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(producer->Begin().ok());
  ASSERT_TRUE(producer->Send({.topic = topic, .value = "aborted"}).ok());
  ASSERT_TRUE(producer->Abort().ok());
  ASSERT_TRUE(producer->Begin().ok());
  ASSERT_TRUE(producer->Send({.topic = topic, .value = "committed"}).ok());
  ASSERT_TRUE(producer->Commit().ok());
  EXPECT_THAT(Values(ReadCommitted(topic, 3)),
              UnorderedElementsAre("committed"));
}

// AddPartitionsToTxn fails with an abortable error: Transact aborts, runs fn
// again, and commits; the output appears once.
TEST_F(TransactionalProducerTest, AbortableErrorRerunsAndTheOutputAppearsOnce) {
  SKIP_WITHOUT_FAULT_INJECTION();
  const std::string topic = NewTopic("t-rerun");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(cluster_
                  ->InjectErrors(api::kAddPartitionsToTxn,
                                 {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED})
                  .ok());
  int runs = 0;
  absl::Status s = producer->Transact(WriteAbc(topic, &runs));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(producer->stats().reruns, 1u);
  EXPECT_EQ(producer->stats().aborted, 1u);
  EXPECT_EQ(producer->stats().committed, 1u);
  EXPECT_THAT(Values(ReadCommitted(topic, 3)),
              UnorderedElementsAre("a", "b", "c"));
}

// The commit itself fails abortably after the records were written: only
// read_committed hides the first run's records.
TEST_F(TransactionalProducerTest,
       AbortableCommitErrorRerunsAndOutputAppearsOnce) {
  SKIP_WITHOUT_FAULT_INJECTION();
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("t-rerun-commit");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  // librdkafka treats an EndTxn error it has no rule for as abortable.
  ASSERT_TRUE(
      cluster_
          ->InjectErrors(api::kEndTxn, {RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS})
          .ok());
  int runs = 0;
  absl::Status s = producer->Transact(WriteAbc(topic, &runs));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(runs, 2);
  EXPECT_THAT(Values(ReadCommitted(topic, 3)),
              UnorderedElementsAre("a", "b", "c"));
}

// The commit times out (its call timeout is shorter than the delayed EndTxn
// response): a retriable error, so the commit is resumed, fn not re-run.
TEST_F(TransactionalProducerTest, RetriableCommitErrorIsRetriedNotRerun) {
  SKIP_WITHOUT_FAULT_INJECTION();
  const std::string topic = NewTopic("t-retry");
  const std::string txn_id = TestCluster::UniqueName("txn");
  ProducerOptions o = TransactionalOpts(txn_id);
  o.transaction_call_timeout = std::chrono::milliseconds(500);
  auto producer = MakeProducer(txn_id, &o);
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(
      cluster_->InjectDelay(api::kEndTxn, std::chrono::milliseconds(2000))
          .ok());
  int runs = 0;
  absl::Status s = producer->Transact(WriteAbc(topic, &runs));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(runs, 1);
  EXPECT_GE(producer->stats().retries, 1u);
  EXPECT_EQ(producer->stats().aborted, 0u);
  EXPECT_THAT(Values(ReadCommitted(topic, 3)),
              UnorderedElementsAre("a", "b", "c"));
}

// Close(timeout) bounds the abort of the transaction left open too: with
// EndTxn's answer held back for 10 minutes, Close(500 ms) returns long before
// the abort's own limit (the transaction's timeout, here 5 minutes).
TEST_F(TransactionalProducerTest, CloseBoundsTheAbortOfAnOpenTransaction) {
  SKIP_WITHOUT_FAULT_INJECTION();
  const std::string topic = NewTopic("t-close-bounded");
  const std::string txn_id = TestCluster::UniqueName("txn");
  ProducerOptions o = TransactionalOpts(txn_id);
  o.properties["transaction.timeout.ms"] = "300000";
  auto producer = MakeProducer(txn_id, &o);
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(producer->Begin().ok());
  // Delivered: the partition is in the transaction, so the abort needs an
  // EndTxn.
  std::promise<void> delivered;
  ASSERT_TRUE(producer
                  ->Send({.topic = topic, .value = "left open"},
                         [&](const DeliveryReport&) { delivered.set_value(); })
                  .ok());
  ASSERT_EQ(delivered.get_future().wait_for(kPatience),
            std::future_status::ready);
  ASSERT_TRUE(
      cluster_->InjectDelay(api::kEndTxn, std::chrono::minutes(10)).ok());
  std::future<absl::Status> closed = std::async(std::launch::async, [&] {
    return producer->Close(std::chrono::milliseconds(500));
  });
  EXPECT_EQ(closed.wait_for(kPatience), std::future_status::ready)
      << "Close(500 ms) waited for the abort's own timeout";
  closed.get().IgnoreError();  // the abort did not finish: not an error here
  ASSERT_TRUE(
      cluster_->InjectDelay(api::kEndTxn, std::chrono::milliseconds(0)).ok());
}

TEST_F(TransactionalProducerTest, GivesUpAfterMaxAttempts) {
  SKIP_WITHOUT_FAULT_INJECTION();
  const std::string topic = NewTopic("t-giveup");
  const std::string txn_id = TestCluster::UniqueName("txn");
  ProducerOptions o = TransactionalOpts(txn_id);
  o.retry.max_attempts = 3;
  auto producer = MakeProducer(txn_id, &o);
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(cluster_
                  ->InjectErrors(api::kAddPartitionsToTxn,
                                 {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                                  RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                                  RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED})
                  .ok());
  int runs = 0;
  absl::Status s = producer->Transact(WriteAbc(topic, &runs));
  EXPECT_EQ(runs, 3);
  EXPECT_TRUE(IsTxnRequiresAbort(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("giving up"));
  EXPECT_FALSE(producer->in_transaction());
  // The producer is still good.
  runs = 0;
  ASSERT_TRUE(producer->Transact(WriteAbc(topic, &runs)).ok());
  EXPECT_THAT(Values(ReadCommitted(topic, 3)),
              UnorderedElementsAre("a", "b", "c"));
}

// The broker says another instance owns the transactional.id: fatal, surfaced
// as fenced, final, and nothing of the transaction is visible.
TEST_F(TransactionalProducerTest, FencingIsFatalFinalAndLeavesNothingVisible) {
  SKIP_WITHOUT_FAULT_INJECTION();
  const std::string topic = NewTopic("t-fenced");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(cluster_
                  ->InjectErrors(api::kAddPartitionsToTxn,
                                 {RD_KAFKA_RESP_ERR_PRODUCER_FENCED})
                  .ok());
  int runs = 0;
  absl::Status s = producer->Transact(WriteAbc(topic, &runs));
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(IsFatal(s)) << s;
  EXPECT_TRUE(IsFenced(s)) << s;
  EXPECT_EQ(KafkaErrorName(s), "_FENCED");
  EXPECT_EQ(NextTxnAction(s), TxnAction::kGiveUp);
  EXPECT_TRUE(producer->stats().fenced);
  // Final: everything after says so, and rebuilding is refused.
  EXPECT_TRUE(IsFenced(producer->Transact(WriteAbc(topic, &runs))));
  EXPECT_EQ(runs, 1);
  absl::Status rebuilt = producer->Rebuild();
  EXPECT_EQ(rebuilt.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(rebuilt.message(), HasSubstr("fenced"));
  EXPECT_TRUE(ReadCommitted(topic, 3).empty());
}

// A fatal error that is not fencing: Rebuild() makes a working producer.
TEST_F(TransactionalProducerTest, RebuildAfterAFatalError) {
  SKIP_WITHOUT_FAULT_INJECTION();
  const std::string topic = NewTopic("t-rebuild");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(cluster_
                  ->InjectErrors(api::kAddPartitionsToTxn,
                                 {RD_KAFKA_RESP_ERR_INVALID_TXN_STATE})
                  .ok());
  int runs = 0;
  absl::Status s = producer->Transact(WriteAbc(topic, &runs));
  EXPECT_TRUE(IsFatal(s)) << s;
  EXPECT_FALSE(IsFenced(s)) << s;
  EXPECT_EQ(KafkaErrorName(s), "INVALID_TXN_STATE");
  EXPECT_FALSE(producer->stats().fenced);
  EXPECT_TRUE(IsFatal(producer->Begin()));
  ASSERT_TRUE(producer->Rebuild().ok());
  EXPECT_EQ(producer->stats().rebuilds, 1u);
  s = producer->Transact(WriteAbc(topic, &runs));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(runs, 2);
  EXPECT_THAT(Values(ReadCommitted(topic, 3)),
              UnorderedElementsAre("a", "b", "c"));
}

// Real fencing: a newer instance with the same transactional.id takes over;
// the old one's open transaction is aborted and its commit fails as fenced.
TEST_F(TransactionalProducerTest, ANewerInstanceFencesTheOldOne) {
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("t-zombie");
  const std::string txn_id = TestCluster::UniqueName("txn");
  auto zombie = MakeProducer(txn_id);
  ASSERT_NE(zombie, nullptr);
  ASSERT_TRUE(zombie->Begin().ok());
  ASSERT_TRUE(zombie->Send({.topic = topic, .value = "zombie"}).ok());

  auto successor = MakeProducer(txn_id);
  ASSERT_NE(successor, nullptr);
  EXPECT_FALSE(zombie->stats().fenced);
  absl::Status s = zombie->Commit();
  EXPECT_TRUE(IsFatal(s)) << s;
  EXPECT_TRUE(IsFenced(s)) << s;
  EXPECT_TRUE(zombie->stats().fenced);
  EXPECT_FALSE(successor->stats().fenced);
  EXPECT_EQ(zombie->Rebuild().code(), absl::StatusCode::kFailedPrecondition);

  int runs = 0;
  ASSERT_TRUE(successor->Transact(WriteAbc(topic, &runs)).ok());
  EXPECT_THAT(Values(ReadCommitted(topic, 3)),
              UnorderedElementsAre("a", "b", "c"));
}

TEST_F(TransactionalProducerTest, FunctionErrorAbortsAndIsReturnedAsIs) {
  const std::string topic = NewTopic("t-fnerr");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  int runs = 0;
  absl::Status s = producer->Transact([&](Transaction& txn) {
    ++runs;
    EXPECT_TRUE(txn.Send({.topic = topic, .value = "half"}).ok());
    return absl::InvalidArgumentError("bad input");
  });
  EXPECT_EQ(s, absl::InvalidArgumentError("bad input"));
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(producer->in_transaction());
  EXPECT_EQ(producer->stats().aborted, 1u);
  int ok_runs = 0;
  ASSERT_TRUE(producer->Transact(WriteAbc(topic, &ok_runs)).ok());
}

TEST_F(TransactionalProducerTest, FunctionExceptionAbortsAndIsReturned) {
  const std::string topic = NewTopic("t-fnthrow");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  absl::Status s = producer->Transact([&](Transaction& txn) -> absl::Status {
    EXPECT_TRUE(txn.Send({.topic = topic, .value = "half"}).ok());
    throw std::runtime_error("bug in fn");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("bug in fn"));
  EXPECT_FALSE(producer->in_transaction());
  int runs = 0;
  ASSERT_TRUE(producer->Transact(WriteAbc(topic, &runs)).ok());
}

TEST_F(TransactionalProducerTest, OffsetsCommitWithTheTransaction) {
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("t-offsets", 1);
  const std::string input = NewTopic("t-offsets-in", 1);
  Produce(input, {{"k", "1"}, {"k", "2"}, {"k", "3"}});
  const std::string group = TestCluster::UniqueName("g");
  auto producer = MakeProducer(TestCluster::UniqueName("txn"));
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(producer
                  ->Transact([&](Transaction& txn) {
                    EXPECT_TRUE(txn.Send({.topic = topic, .value = "o"}).ok());
                    return txn.SendOffsets(
                        {{input, 0, 2}},
                        ConsumerGroupMetadata::ForGroup(group));
                  })
                  .ok());
  // A consumer of that group starts after the committed offset.
  auto consumer = Consumer::Create(ConsumerOpts(group));
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->Subscribe({input}).ok());
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  std::optional<Message> m;
  while (!m.has_value() && std::chrono::steady_clock::now() < deadline) {
    auto polled = (*consumer)->Poll(std::chrono::milliseconds(200));
    ASSERT_TRUE(polled.ok()) << polled.status();
    m = std::move(*polled);
  }
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->offset(), 2);
  EXPECT_EQ(m->value(), "3");
}

}  // namespace
}  // namespace exactly::testing
