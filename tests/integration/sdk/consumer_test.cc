// The consumer against a cluster: every record once and in order, commits,
// seek and position, the rebalance listener, a clean close, read_committed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "sdk_test_util.h"

namespace exactly::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class ConsumerTest : public SdkTest {
 protected:
  std::unique_ptr<Consumer> MakeConsumer(const std::string& group,
                                         ErrorCallback on_error = nullptr) {
    ConsumerOptions o = ConsumerOpts(group);
    o.on_error = std::move(on_error);
    auto consumer = Consumer::Create(o);
    EXPECT_TRUE(consumer.ok()) << consumer.status();
    return consumer.ok() ? std::move(*consumer) : nullptr;
  }

  // Polls until `n` records arrived (or patience ran out).
  std::vector<Message> PollN(Consumer& consumer, size_t n) {
    std::vector<Message> out;
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      auto m = consumer.Poll(std::chrono::milliseconds(200));
      EXPECT_TRUE(m.ok()) << m.status();
      if (!m.ok()) break;
      if (m->has_value()) out.push_back(std::move(**m));
    }
    EXPECT_EQ(out.size(), n);
    return out;
  }

  static std::vector<std::pair<std::string, std::string>> Numbered(int from,
                                                                   int to) {
    std::vector<std::pair<std::string, std::string>> out;
    for (int i = from; i < to; ++i) {
      out.emplace_back("k" + std::to_string(i % 7), std::to_string(i));
    }
    return out;
  }
};

// Records the listener's calls.
class RecordingListener : public RebalanceListener {
 public:
  void OnAssigned(const std::vector<TopicPartition>& p) override {
    std::lock_guard<std::mutex> lock(mu);
    assigned.insert(assigned.end(), p.begin(), p.end());
  }
  void OnRevoked(const std::vector<TopicPartition>& p) override {
    std::lock_guard<std::mutex> lock(mu);
    revoked.insert(revoked.end(), p.begin(), p.end());
  }
  std::mutex mu;
  std::vector<TopicPartition> assigned;
  std::vector<TopicPartition> revoked;
};

// librdkafka's statistics reach on_statistics inside Poll.
TEST_F(ConsumerTest, StatisticsReachOnStatisticsInsidePoll) {
  const std::string topic = NewTopic("c-stats", 1);
  int reports = 0;
  std::string first;
  ConsumerOptions o = ConsumerOpts(TestCluster::UniqueName("c-stats"));
  o.properties["statistics.interval.ms"] = "100";
  o.on_statistics = [&](std::string_view json) {
    if (reports++ == 0) first = std::string(json);
  };
  auto consumer = Consumer::Create(o);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->Subscribe({topic}).ok());
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (reports == 0 && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE((*consumer)->Poll(std::chrono::milliseconds(50)).ok());
  }
  ASSERT_GT(reports, 0);
  EXPECT_THAT(first, ::testing::HasSubstr("\"type\": \"consumer\""));
}

TEST_F(ConsumerTest, EveryRecordOnceAndInOrderPerPartition) {
  const std::string topic = NewTopic("c-all");
  Produce(topic, Numbered(0, 60));
  auto consumer = MakeConsumer(TestCluster::UniqueName("g"));
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Subscribe({topic}).ok());
  std::vector<Message> got = PollN(*consumer, 60);
  std::map<std::string, int> count;
  std::map<int32_t, int64_t> last_offset;
  std::map<std::string, int> last_value_per_key;
  for (const Message& m : got) {
    ++count[std::string(m.value())];
    EXPECT_EQ(m.topic(), topic);
    if (last_offset.count(m.partition()) != 0) {
      EXPECT_GT(m.offset(), last_offset[m.partition()]);
    }
    last_offset[m.partition()] = m.offset();
    // Same key, same partition: values of a key arrive in send order.
    const int v = std::stoi(std::string(m.value()));
    auto it = last_value_per_key.find(std::string(m.key()));
    if (it != last_value_per_key.end()) {
      EXPECT_GT(v, it->second);
    }
    last_value_per_key[std::string(m.key())] = v;
  }
  ASSERT_EQ(count.size(), 60u);
  for (const auto& [value, n] : count) EXPECT_EQ(n, 1) << value;
}

TEST_F(ConsumerTest, PollBatchTakesAtMostMax) {
  const std::string topic = NewTopic("c-batch", 1);
  Produce(topic, Numbered(0, 25));
  auto consumer = MakeConsumer(TestCluster::UniqueName("g"));
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Subscribe({topic}).ok());
  std::vector<Message> all;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (all.size() < 25 && std::chrono::steady_clock::now() < deadline) {
    auto batch = consumer->PollBatch(10, std::chrono::milliseconds(200));
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_LE(batch->size(), 10u);
    for (Message& m : *batch) all.push_back(std::move(m));
  }
  ASSERT_EQ(all.size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(all[i].offset(), i);
}

TEST_F(ConsumerTest, CommitThenTheGroupResumesAfterIt) {
  const std::string topic = NewTopic("c-commit", 1);
  const std::string group = TestCluster::UniqueName("g");
  Produce(topic, Numbered(0, 10));
  {
    auto consumer = MakeConsumer(group);
    ASSERT_NE(consumer, nullptr);
    ASSERT_TRUE(consumer->Subscribe({topic}).ok());
    PollN(*consumer, 10);
    ASSERT_TRUE(consumer->Commit().ok());
    auto committed = consumer->Committed();
    ASSERT_TRUE(committed.ok()) << committed.status();
    ASSERT_EQ(committed->size(), 1u);
    EXPECT_EQ((*committed)[0].offset, 10);
    ASSERT_TRUE(consumer->Close().ok());
  }
  Produce(topic, Numbered(10, 15));
  auto consumer = MakeConsumer(group);
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Subscribe({topic}).ok());
  std::vector<Message> got = PollN(*consumer, 5);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.front().offset(), 10);
  EXPECT_EQ(got.front().value(), "10");
}

TEST_F(ConsumerTest, CommitExplicitOffsets) {
  const std::string topic = NewTopic("c-commit-explicit", 1);
  Produce(topic, Numbered(0, 10));
  auto consumer = MakeConsumer(TestCluster::UniqueName("g"));
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Subscribe({topic}).ok());
  PollN(*consumer, 10);
  ASSERT_TRUE(consumer->Commit({{topic, 0, 4}}).ok());
  auto committed = consumer->Committed();
  ASSERT_TRUE(committed.ok()) << committed.status();
  ASSERT_EQ(committed->size(), 1u);
  EXPECT_EQ((*committed)[0].offset, 4);
}

TEST_F(ConsumerTest, CommitAsyncReportsInsideALaterPoll) {
  const std::string topic = NewTopic("c-commit-async", 1);
  Produce(topic, Numbered(0, 5));
  auto consumer = MakeConsumer(TestCluster::UniqueName("g"));
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Subscribe({topic}).ok());
  PollN(*consumer, 5);
  int calls = 0;
  absl::Status result = absl::UnknownError("not called");
  ASSERT_TRUE(consumer
                  ->CommitAsync([&](const absl::Status& s) {
                    ++calls;
                    result = s;
                  })
                  .ok());
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (calls == 0 && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(consumer->Poll(std::chrono::milliseconds(100)).ok());
  }
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(result.ok()) << result;
  auto committed = consumer->Committed();
  ASSERT_TRUE(committed.ok());
  EXPECT_EQ((*committed)[0].offset, 5);
}

TEST_F(ConsumerTest, SeekAndPosition) {
  const std::string topic = NewTopic("c-seek", 1);
  Produce(topic, Numbered(0, 10));
  auto consumer = MakeConsumer(TestCluster::UniqueName("g"));
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Subscribe({topic}).ok());
  PollN(*consumer, 10);
  auto position = consumer->Position();
  ASSERT_TRUE(position.ok()) << position.status();
  ASSERT_EQ(position->size(), 1u);
  EXPECT_EQ((*position)[0].offset, 10);

  ASSERT_TRUE(consumer->Seek({topic, 0, 3}).ok());
  std::vector<Message> again = PollN(*consumer, 7);
  ASSERT_EQ(again.size(), 7u);
  EXPECT_EQ(again.front().offset(), 3);
  EXPECT_EQ(again.back().offset(), 9);

  ASSERT_TRUE(consumer->Seek({topic, 0, kOffsetBeginning}).ok());
  std::vector<Message> from_start = PollN(*consumer, 10);
  ASSERT_FALSE(from_start.empty());
  EXPECT_EQ(from_start.front().offset(), 0);
}

TEST_F(ConsumerTest, ListenerSeesTheAssignmentAndTheRevocationOnClose) {
  const std::string topic = NewTopic("c-listener", 2);
  Produce(topic, Numbered(0, 4));
  auto consumer = MakeConsumer(TestCluster::UniqueName("g"));
  ASSERT_NE(consumer, nullptr);
  auto listener = std::make_shared<RecordingListener>();
  ASSERT_TRUE(consumer->Subscribe({topic}, listener).ok());
  PollN(*consumer, 4);
  EXPECT_THAT(
      listener->assigned,
      UnorderedElementsAre(TopicPartition{topic, 0}, TopicPartition{topic, 1}));
  auto assignment = consumer->Assignment();
  ASSERT_TRUE(assignment.ok());
  EXPECT_EQ(assignment->size(), 2u);
  EXPECT_TRUE(listener->revoked.empty());
  ASSERT_TRUE(consumer->Close().ok());
  EXPECT_THAT(
      listener->revoked,
      UnorderedElementsAre(TopicPartition{topic, 0}, TopicPartition{topic, 1}));
  EXPECT_EQ(consumer->Poll(std::chrono::milliseconds(0)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(consumer->Close().ok());
}

TEST_F(ConsumerTest, ListenerExceptionIsReportedAndTheRebalanceCompletes) {
  class Throwing : public RebalanceListener {
   public:
    void OnAssigned(const std::vector<TopicPartition>&) override {
      throw std::runtime_error("listener bug");
    }
  };
  const std::string topic = NewTopic("c-listener-throw", 1);
  Produce(topic, Numbered(0, 3));
  std::vector<absl::Status> errors;
  auto consumer =
      MakeConsumer(TestCluster::UniqueName("g"),
                   [&](const absl::Status& s) { errors.push_back(s); });
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Subscribe({topic}, std::make_shared<Throwing>()).ok());
  EXPECT_EQ(PollN(*consumer, 3).size(), 3u);  // assigned regardless
  bool reported = false;
  for (const absl::Status& s : errors) {
    reported |= absl::StrContains(s.message(), "listener bug");
  }
  EXPECT_TRUE(reported);
}

TEST_F(ConsumerTest, CloseLeavesTheGroupSoAnotherMemberTakesOver) {
  const std::string topic = NewTopic("c-leave", 2);
  const std::string group = TestCluster::UniqueName("g");
  Produce(topic, Numbered(0, 2));
  auto first = MakeConsumer(group);
  ASSERT_NE(first, nullptr);
  auto first_listener = std::make_shared<RecordingListener>();
  ASSERT_TRUE(first->Subscribe({topic}, first_listener).ok());
  PollN(*first, 2);

  auto second = MakeConsumer(group);
  ASSERT_NE(second, nullptr);
  auto second_listener = std::make_shared<RecordingListener>();
  ASSERT_TRUE(second->Subscribe({topic}, second_listener).ok());
  // Both serve the rebalance that the second one's join starts.
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(first->Poll(std::chrono::milliseconds(50)).ok());
    ASSERT_TRUE(second->Poll(std::chrono::milliseconds(50)).ok());
    std::lock_guard<std::mutex> lock(second_listener->mu);
    if (!second_listener->assigned.empty()) break;
  }
  ASSERT_TRUE(first->Close().ok());
  // With the first gone, the second ends up with both partitions.
  while (std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(second->Poll(std::chrono::milliseconds(100)).ok());
    auto assignment = second->Assignment();
    ASSERT_TRUE(assignment.ok());
    if (assignment->size() == 2) break;
  }
  auto assignment = second->Assignment();
  ASSERT_TRUE(assignment.ok());
  EXPECT_EQ(assignment->size(), 2u);
}

TEST_F(ConsumerTest, ReadCommittedSkipsAbortedTransactions) {
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("c-read-committed", 1);
  ProducerOptions o = TransactionalOpts(TestCluster::UniqueName("txn"));
  auto producer = TransactionalProducer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (const char* v : {"committed-1", "aborted", "committed-2"}) {
    ASSERT_TRUE((*producer)->Begin().ok());
    ASSERT_TRUE((*producer)->Send({.topic = topic, .value = v}).ok());
    ASSERT_TRUE((std::string(v) == "aborted" ? (*producer)->Abort()
                                             : (*producer)->Commit())
                    .ok());
  }
  EXPECT_THAT(Values(ReadCommitted(topic, 1)),
              UnorderedElementsAre("committed-1", "committed-2"));
}

}  // namespace
}  // namespace exactly::testing
