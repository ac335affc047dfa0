// The processor against a cluster: every input transformed into committed
// output once, batching, replay after an abortable error, transform errors,
// restarts and rebalances.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sdk_test_util.h"

namespace exactly::testing {
namespace {

using ::testing::HasSubstr;

std::string F(std::string_view v) { return "f(" + std::string(v) + ")"; }

class ProcessorTest : public SdkTest {
 protected:
  void SetUp() override {
    SdkTest::SetUp();
    input_ = NewTopic("proc-in", 3);
    output_ = NewTopic("proc-out", 3);
    group_ = TestCluster::UniqueName("proc-group");
  }

  ProcessorOptions Options(const std::string& txn_id) const {
    ProcessorOptions o;
    o.bootstrap_servers = bootstrap();
    o.group_id = group_;
    o.input_topics = {input_};
    o.transactional_id = txn_id;
    o.max_batch_records = 20;
    o.max_batch_time = std::chrono::milliseconds(50);
    o.consumer_properties["session.timeout.ms"] = "6000";
    o.consumer_properties["heartbeat.interval.ms"] = "500";
    o.producer_properties["transaction.timeout.ms"] = "10000";
    o.retry.initial_backoff = std::chrono::milliseconds(20);
    return o;
  }

  Transform Copy() const {
    return [out = output_](const Message& in, Emitter& emitter) {
      return emitter.Send(
          {.topic = out, .key = in.key(), .value = F(in.value())});
    };
  }

  std::vector<std::string> Inputs(int n) {
    std::vector<std::pair<std::string, std::string>> kvs;
    std::vector<std::string> values;
    for (int i = 0; i < n; ++i) {
      values.push_back("v" + std::to_string(i));
      kvs.emplace_back("k" + std::to_string(i), values.back());
    }
    Produce(input_, kvs);
    return values;
  }

  std::multiset<std::string> Expected(const std::vector<std::string>& inputs) {
    std::multiset<std::string> out;
    for (const std::string& v : inputs) out.insert(F(v));
    return out;
  }

  // Runs `p` on a thread until it has committed `n` inputs, then stops it.
  absl::Status RunUntil(Processor& p, uint64_t n) {
    absl::Status status;
    std::thread runner([&] { status = p.Run(); });
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (p.stats().records_in < n &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    p.Stop();
    runner.join();
    return status;
  }

  std::string input_;
  std::string output_;
  std::string group_;
};

TEST_F(ProcessorTest, EveryInputTransformedOnce) {
  const std::vector<std::string> inputs = Inputs(100);
  auto p = Processor::Create(Options(TestCluster::UniqueName("txn")), Copy());
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(RunUntil(**p, inputs.size()).ok());
  const ProcessorStats stats = (*p)->stats();
  EXPECT_EQ(stats.records_in, inputs.size());
  EXPECT_EQ(stats.records_out, inputs.size());
  EXPECT_GE(stats.transactions_committed, 1u);
  uint64_t committed = 0;
  for (const TopicPartitionOffset& o : stats.committed_offsets) {
    EXPECT_EQ(o.topic, input_);
    committed += o.offset;  // offsets start at 0: next offset = count
  }
  EXPECT_EQ(committed, inputs.size());
  {
    absl::Status closed = (*p)->Close();
    ASSERT_TRUE(closed.ok()) << closed;
  }
  EXPECT_TRUE(SameRecords(Values(ReadCommitted(output_, 3)), Expected(inputs)));
}

TEST_F(ProcessorTest, BatchesByCount) {
  const std::vector<std::string> inputs = Inputs(100);
  ProcessorOptions o = Options(TestCluster::UniqueName("txn"));
  o.max_batch_records = 10;
  o.max_batch_time = std::chrono::milliseconds(5000);  // count ends batches
  auto p = Processor::Create(o, Copy());
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(RunUntil(**p, inputs.size()).ok());
  EXPECT_EQ((*p)->stats().records_in, 100u);
  EXPECT_GE((*p)->stats().transactions_committed, 10u);
  {
    absl::Status closed = (*p)->Close();
    ASSERT_TRUE(closed.ok()) << closed;
  }
  EXPECT_TRUE(SameRecords(Values(ReadCommitted(output_, 3)), Expected(inputs)));
}

TEST_F(ProcessorTest, OneInputManyOutputsOrNone) {
  const std::vector<std::string> inputs = Inputs(30);
  auto p = Processor::Create(
      Options(TestCluster::UniqueName("txn")),
      [out = output_](const Message& in, Emitter& emitter) -> absl::Status {
        const int n = std::stoi(std::string(in.value().substr(1))) % 3;
        for (int i = 0; i < n; ++i) {
          absl::Status s = emitter.Send({.topic = out, .value = F(in.value())});
          if (!s.ok()) return s;
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(RunUntil(**p, inputs.size()).ok());
  std::multiset<std::string> expected;
  for (const std::string& v : inputs) {
    for (int i = 0; i < std::stoi(v.substr(1)) % 3; ++i) expected.insert(F(v));
  }
  EXPECT_EQ((*p)->stats().records_out, expected.size());
  {
    absl::Status closed = (*p)->Close();
    ASSERT_TRUE(closed.ok()) << closed;
  }
  EXPECT_TRUE(SameRecords(Values(ReadCommitted(output_, 3)), expected));
}

TEST_F(ProcessorTest, AbortableErrorReplaysTheBatchAndOutputAppearsOnce) {
  SKIP_WITHOUT_FAULT_INJECTION();
  const std::vector<std::string> inputs = Inputs(40);
  auto p = Processor::Create(Options(TestCluster::UniqueName("txn")), Copy());
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(cluster_
                  ->InjectErrors(api::kAddPartitionsToTxn,
                                 {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED})
                  .ok());
  ASSERT_TRUE(RunUntil(**p, inputs.size()).ok());
  const ProcessorStats stats = (*p)->stats();
  EXPECT_EQ(stats.records_in, inputs.size());
  EXPECT_EQ(stats.records_out, inputs.size());
  EXPECT_GE(stats.transactions_aborted, 1u);
  EXPECT_GE(stats.batches_replayed, 1u);
  {
    absl::Status closed = (*p)->Close();
    ASSERT_TRUE(closed.ok()) << closed;
  }
  EXPECT_TRUE(SameRecords(Values(ReadCommitted(output_, 3)), Expected(inputs)));
}

TEST_F(ProcessorTest, TransformErrorStopsTheProcessor) {
  const std::vector<std::string> inputs = Inputs(10);
  auto p = Processor::Create(
      Options(TestCluster::UniqueName("txn")),
      [out = output_](const Message& in, Emitter& emitter) -> absl::Status {
        if (in.value() == "v7") return absl::DataLossError("cannot parse v7");
        return emitter.Send({.topic = out, .value = F(in.value())});
      });
  ASSERT_TRUE(p.ok()) << p.status();
  absl::Status s = (*p)->Run();
  EXPECT_EQ(s, absl::DataLossError("cannot parse v7"));
  // The input that failed (and its batch) is not committed.
  EXPECT_LT((*p)->stats().records_in, inputs.size());
}

TEST_F(ProcessorTest, TransformExceptionStopsTheProcessor) {
  Inputs(3);
  auto p = Processor::Create(Options(TestCluster::UniqueName("txn")),
                             [](const Message&, Emitter&) -> absl::Status {
                               throw std::runtime_error("transform bug");
                             });
  ASSERT_TRUE(p.ok()) << p.status();
  absl::Status s = (*p)->Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("transform bug"));
  EXPECT_EQ((*p)->stats().records_in, 0u);
}

// Nothing of a batch whose transform failed becomes visible, and a restarted
// processor (same transactional.id and group) resumes from the committed
// offsets: the output is exactly f(input).
TEST_F(ProcessorTest, RestartAfterAFailedBatchResumesExactly) {
  SKIP_WITHOUT_TRANSACTIONS();
  const std::vector<std::string> inputs = Inputs(50);
  const std::string txn_id = TestCluster::UniqueName("txn");
  std::atomic<bool> fail{true};
  Transform flaky = [&, out = output_](const Message& in,
                                       Emitter& emitter) -> absl::Status {
    absl::Status s = emitter.Send({.topic = out, .value = F(in.value())});
    if (s.ok() && fail && in.value() == "v33") {
      return absl::UnavailableError("downstream service down");
    }
    return s;
  };
  uint64_t first_committed = 0;
  {
    auto p = Processor::Create(Options(txn_id), flaky);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ((*p)->Run().code(), absl::StatusCode::kUnavailable);
    first_committed = (*p)->stats().records_in;
    EXPECT_LT(first_committed, inputs.size());
    {
      absl::Status closed = (*p)->Close();
      ASSERT_TRUE(closed.ok()) << closed;
    }
  }
  fail = false;
  auto p = Processor::Create(Options(txn_id), flaky);
  ASSERT_TRUE(p.ok()) << p.status();
  // Exactly the rest is processed: nothing the first instance committed,
  // everything it did not.
  ASSERT_TRUE(RunUntil(**p, inputs.size() - first_committed).ok());
  EXPECT_EQ((*p)->stats().records_in, inputs.size() - first_committed);
  {
    absl::Status closed = (*p)->Close();
    ASSERT_TRUE(closed.ok()) << closed;
  }
  EXPECT_TRUE(SameRecords(Values(ReadCommitted(output_, 3)), Expected(inputs)));
}

// Two instances share the input: the rebalance revokes partitions from the
// first while it works; whatever it had not committed is aborted and the
// output is still exactly f(input).
TEST_F(ProcessorTest, RebalanceAbortsAndNothingIsDuplicatedOrLost) {
  SKIP_WITHOUT_TRANSACTIONS();
  const std::vector<std::string> inputs = Inputs(600);
  ProcessorOptions o = Options(TestCluster::UniqueName("txn-a"));
  auto a = Processor::Create(o, Copy());
  ASSERT_TRUE(a.ok()) << a.status();
  absl::Status a_status, b_status;
  std::thread run_a([&] { a_status = (*a)->Run(); });
  while ((*a)->stats().records_in == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  o.transactional_id = TestCluster::UniqueName("txn-b");
  auto b = Processor::Create(o, Copy());
  ASSERT_TRUE(b.ok()) << b.status();
  std::thread run_b([&] { b_status = (*b)->Run(); });
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while ((*a)->stats().records_in + (*b)->stats().records_in < inputs.size() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  (*a)->Stop();
  (*b)->Stop();
  run_a.join();
  run_b.join();
  EXPECT_TRUE(a_status.ok()) << a_status;
  EXPECT_TRUE(b_status.ok()) << b_status;
  EXPECT_EQ((*a)->stats().records_in + (*b)->stats().records_in, inputs.size());
  ASSERT_TRUE((*a)->Close().ok());
  ASSERT_TRUE((*b)->Close().ok());
  EXPECT_TRUE(SameRecords(Values(ReadCommitted(output_, 3)), Expected(inputs)));
}

}  // namespace
}  // namespace exactly::testing
