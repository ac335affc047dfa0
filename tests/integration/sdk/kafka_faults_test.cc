// The SDK against real broker failures of Apache Kafka: the JVM leading a
// partition, or coordinating the producer's transactions, is SIGKILLed (or
// SIGSTOPped) while records flow, then started again (resumed). Afterwards a
// read_committed consumer counts: every record once, none lost, none
// duplicated.
//
// Runs where scripts/kafka.sh runs the cluster (CTest's kafka label sets
// EXACTLY_KAFKA_CLUSTER); elsewhere each test skips and says so. On one
// broker the cluster is down until the restart, and the producer must wait
// it out; on three (replication factor 3, min.insync.replicas 2) leadership
// moves to a surviving replica.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sdk_test_util.h"

namespace exactly::testing {
namespace {

constexpr int kPartitions = 3;
constexpr int kBatches = 60;
constexpr int kPerBatch = 100;

std::string Value(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "v%06d", i);
  return buf;
}

std::multiset<std::string> Expected(int n) {
  std::multiset<std::string> out;
  for (int i = 0; i < n; ++i) out.insert(Value(i));
  return out;
}

class KafkaFaultsTest : public SdkTest {
 protected:
  void SetUp() override {
    SdkTest::SetUp();
    if (HasFatalFailure()) return;
    if (cluster_->kafka() == nullptr) {
      GTEST_SKIP() << "needs an Apache Kafka cluster run by scripts/kafka.sh "
                      "(EXACTLY_KAFKA_CLUSTER): these faults kill and stop "
                      "real broker processes";
    }
  }

  KafkaHarness& kafka() { return *cluster_->kafka(); }

  // Patient enough to wait out a broker's restart (on one broker the cluster
  // is down for that long): the application's choice, not the default.
  ProducerOptions PatientTransactionalOpts(const std::string& txn_id) {
    ProducerOptions o = TransactionalOpts(txn_id);
    o.properties["transaction.timeout.ms"] = "60000";
    o.retry.max_retries = 1000;
    o.retry.max_attempts = 100;
    o.retry.max_backoff = std::chrono::milliseconds(500);
    return o;
  }

  // Sends kBatches transactions of kPerBatch records from a thread; once a
  // quarter of them committed, runs `fault` (which returns after the cluster
  // is whole again). Then reads the topic back.
  void TransactWhile(const std::string& topic, const std::string& txn_id,
                     const std::function<void()>& fault) {
    auto producer =
        TransactionalProducer::Create(PatientTransactionalOpts(txn_id));
    ASSERT_TRUE(producer.ok()) << producer.status();
    std::atomic<int> committed{0};
    std::thread writer([&] {
      for (int b = 0; b < kBatches; ++b) {
        absl::Status s = (*producer)->Transact([&](Transaction& txn) {
          for (int i = b * kPerBatch; i < (b + 1) * kPerBatch; ++i) {
            absl::Status sent = txn.Send(
                {.topic = topic, .key = Value(i % 17), .value = Value(i)});
            if (!sent.ok()) return sent;
          }
          return absl::OkStatus();
        });
        EXPECT_TRUE(s.ok()) << "transaction " << b << ": " << s;
        if (!s.ok()) return;
        committed.fetch_add(1);
      }
    });
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (committed.load() < kBatches / 4 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(committed.load(), kBatches / 4) << "no progress before the fault";
    fault();
    writer.join();
    TransactionStats stats = (*producer)->stats();
    std::printf(
        "%d of %d transactions committed; %llu aborted, %llu re-run, "
        "%llu retried calls\n",
        committed.load(), kBatches,
        static_cast<unsigned long long>(stats.aborted),
        static_cast<unsigned long long>(stats.reruns),
        static_cast<unsigned long long>(stats.retries));
    ASSERT_TRUE((*producer)->Close().ok());
    ASSERT_EQ(committed.load(), kBatches);
    EXPECT_TRUE(SameRecords(Values(ReadCommitted(topic, kPartitions)),
                            Expected(kBatches * kPerBatch)));
  }

  // SIGKILL `node`, let the clients meet the loss for a while, start it again.
  void KillAndRestart(int node) {
    std::printf("SIGKILL node %d of %d\n", node, kafka().brokers());
    ASSERT_TRUE(kafka().Signal(node, SIGKILL).ok());
    std::this_thread::sleep_for(std::chrono::seconds(4));
    absl::Status s = kafka().Restart(node);
    ASSERT_TRUE(s.ok()) << s;
  }
};

TEST_F(KafkaFaultsTest, TransactionsSurviveTheLeaderKilled) {
  const std::string topic = NewTopic("leader-killed", kPartitions);
  TransactWhile(topic, TestCluster::UniqueName("leader-killed"), [&] {
    absl::StatusOr<int> leader = kafka().Leader(topic, 0);
    ASSERT_TRUE(leader.ok()) << leader.status();
    KillAndRestart(*leader);
  });
}

TEST_F(KafkaFaultsTest, TransactionsSurviveTheCoordinatorKilled) {
  const std::string topic = NewTopic("coordinator-killed", kPartitions);
  const std::string txn_id = TestCluster::UniqueName("coordinator-killed");
  TransactWhile(topic, txn_id, [&] {
    absl::StatusOr<int> coordinator = kafka().TransactionCoordinator(txn_id);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    KillAndRestart(*coordinator);
  });
}

// A broker that stops answering without closing its sockets (a long GC
// pause, a frozen VM): on three brokers the controller fences it and moves
// its leadership; when it wakes it must not accept what is no longer its.
TEST_F(KafkaFaultsTest, TransactionsSurviveTheLeaderFrozen) {
  const std::string topic = NewTopic("leader-frozen", kPartitions);
  TransactWhile(topic, TestCluster::UniqueName("leader-frozen"), [&] {
    absl::StatusOr<int> leader = kafka().Leader(topic, 0);
    ASSERT_TRUE(leader.ok()) << leader.status();
    std::printf("SIGSTOP node %d for 8 s\n", *leader);
    ASSERT_TRUE(kafka().Signal(*leader, SIGSTOP).ok());
    std::this_thread::sleep_for(std::chrono::seconds(8));
    ASSERT_TRUE(kafka().Signal(*leader, SIGCONT).ok());
  });
}

// The idempotent producer (acks=all): every record it acknowledged is in
// the log once, though the leader died with batches in flight.
TEST_F(KafkaFaultsTest, IdempotentProducerLosesNothingWhenTheLeaderIsKilled) {
  const std::string topic = NewTopic("idempotent-killed", kPartitions);
  constexpr int kRecords = 20000;
  std::mutex mu;
  std::multiset<std::string> acked;
  int failed = 0;
  auto producer = Producer::Create(ProducerOpts());
  ASSERT_TRUE(producer.ok()) << producer.status();
  absl::StatusOr<int> leader = kafka().Leader(topic, 0);
  ASSERT_TRUE(leader.ok()) << leader.status();
  std::thread fault;
  for (int i = 0; i < kRecords; ++i) {
    absl::Status sent = (*producer)->Send(
        {.topic = topic, .key = Value(i % 17), .value = Value(i)},
        [&](const DeliveryReport& r) {
          std::lock_guard<std::mutex> lock(mu);
          if (r.status.ok()) {
            acked.insert(std::string(r.value));
          } else {
            ++failed;
          }
        });
    if (!sent.ok()) {
      ADD_FAILURE() << "Send " << i << ": " << sent;
      break;
    }
    if (i == kRecords / 4)
      fault = std::thread([&] { KillAndRestart(*leader); });
    if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (fault.joinable()) fault.join();
  absl::Status flushed = (*producer)->Flush(std::chrono::seconds(120));
  ASSERT_TRUE(flushed.ok()) << flushed;
  std::printf("%zu records acknowledged, %d failed\n", acked.size(), failed);
  EXPECT_EQ(failed, 0) << "the producer retries until message.timeout.ms";
  EXPECT_EQ(acked, Expected(kRecords));
  std::multiset<std::string> read = Values(ReadCommitted(topic, kPartitions));
  EXPECT_TRUE(SameRecords(read, Expected(kRecords)));
}

// The consume-transform-produce loop while the broker coordinating its
// transactions is SIGKILLed and started again. Errors are handled as an
// application would: retry what NextTxnAction says to retry, and build a new
// Processor (same transactional id) after any other error. The committed
// output is still exactly f(input): an input neither lost nor transformed
// into the output twice, whatever the commit in flight when the broker died.
TEST_F(KafkaFaultsTest,
       ProcessorOutputIsExactlyFOfInputThroughACoordinatorKill) {
  constexpr int kInputs = 4000;
  const std::string input = NewTopic("eos-in", kPartitions);
  const std::string output = NewTopic("eos-out", kPartitions);
  const std::string group = TestCluster::UniqueName("eos-group");
  const std::string txn_id = TestCluster::UniqueName("eos-txn");
  std::vector<std::pair<std::string, std::string>> kvs;
  std::multiset<std::string> expected;
  for (int i = 0; i < kInputs; ++i) {
    kvs.emplace_back(Value(i % 17), Value(i));
    expected.insert("f(" + Value(i) + ")");
  }
  Produce(input, kvs);

  ProcessorOptions o;
  o.bootstrap_servers = bootstrap();
  o.input_topics = {input};
  o.group_id = group;
  o.transactional_id = txn_id;
  o.max_batch_records = 50;
  o.max_batch_time = std::chrono::milliseconds(50);
  o.consumer_properties["session.timeout.ms"] = "6000";
  o.consumer_properties["heartbeat.interval.ms"] = "500";
  o.producer_properties["transaction.timeout.ms"] = "60000";
  // About 1 ms a record: several seconds of work, the fault in the middle.
  const Transform transform = [&output](const Message& in, Emitter& out) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return out.Send({.topic = output,
                     .key = std::string(in.key()),
                     .value = "f(" + std::string(in.value()) + ")"});
  };

  std::atomic<uint64_t> committed_inputs{0};
  std::atomic<bool> stop{false};
  int rebuilds = 0;
  std::vector<std::string> errors;
  std::thread worker([&] {
    uint64_t before_this_one = 0;  // committed by the processors before
    while (!stop.load()) {
      auto processor = Processor::Create(o, transform);
      if (!processor.ok()) {
        errors.push_back("create: " + processor.status().ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        continue;
      }
      while (!stop.load()) {
        absl::Status s = (*processor)->RunOnce();
        committed_inputs.store(before_this_one +
                               (*processor)->stats().records_in);
        if (s.ok()) continue;
        const TxnAction action = NextTxnAction(s);
        if (action == TxnAction::kRetry ||
            action == TxnAction::kAbortAndRerun) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
        errors.push_back(s.ToString());
        break;  // build a new one, as a restarted application would
      }
      before_this_one += (*processor)->stats().records_in;
      committed_inputs.store(before_this_one);
      (void)(*processor)->Close();
      if (!stop.load()) ++rebuilds;
    }
  });

  const auto progress_deadline = std::chrono::steady_clock::now() + kPatience;
  while (committed_inputs.load() < kInputs / 4 &&
         std::chrono::steady_clock::now() < progress_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(committed_inputs.load(), static_cast<uint64_t>(kInputs / 4))
      << "no progress before the fault";
  absl::StatusOr<int> coordinator = kafka().TransactionCoordinator(txn_id);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  KillAndRestart(*coordinator);

  // Done when a read_committed reader has seen every output (a processor's
  // own count can miss a commit whose answer died with the broker, so it is
  // not the measure).
  EXPECT_EQ(AwaitDistinctValues(output, kInputs, 3 * kPatience),
            static_cast<size_t>(kInputs))
      << "output incomplete";
  stop.store(true);
  worker.join();
  std::printf(
      "%llu inputs committed as the processors counted; %d new "
      "processors after errors\n",
      static_cast<unsigned long long>(committed_inputs.load()), rebuilds);
  for (const std::string& e : errors) std::printf("  error: %s\n", e.c_str());
  EXPECT_TRUE(
      SameRecords(Values(ReadCommitted(output, kPartitions)), expected));
}

}  // namespace
}  // namespace exactly::testing
