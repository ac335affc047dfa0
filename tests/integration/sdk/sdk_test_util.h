// Helpers shared by the SDK's integration tests: a cluster per test, writing
// input, and reading back exactly what a read_committed consumer sees.
#ifndef EXACTLY_TESTS_INTEGRATION_SDK_SDK_TEST_UTIL_H_
#define EXACTLY_TESTS_INTEGRATION_SDK_SDK_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "exactly/exactly.h"
#include "support/test_cluster.h"

namespace exactly::testing {

// Liveness bound for waits on a cluster: a test that needs longer has hung.
inline constexpr std::chrono::seconds kPatience{60};

// Polls `consumer` until it has read `want` records or `patience` ran out,
// and returns how many it read. A poll error fails the test and ends it.
inline int PollRecords(Consumer& consumer, int want,
                       std::chrono::seconds patience) {
  int read = 0;
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (read < want && std::chrono::steady_clock::now() < deadline) {
    auto m = consumer.Poll(std::chrono::milliseconds(200));
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) break;
    if (m->has_value()) ++read;
  }
  return read;
}

struct ReadRecord {
  std::string key;
  std::string value;
  int32_t partition = 0;
  int64_t offset = 0;
};

// Passes when `actual` holds every value of `expected` as many times as it
// does, and nothing else; otherwise names what was lost, what appears too
// often and what was never expected (the first few of each), which a
// printout of two multisets of thousands cannot.
inline ::testing::AssertionResult SameRecords(
    const std::multiset<std::string>& actual,
    const std::multiset<std::string>& expected) {
  std::vector<std::string> lost, duplicated, unexpected;
  for (auto it = expected.begin(); it != expected.end();
       it = expected.upper_bound(*it)) {
    const size_t want = expected.count(*it), got = actual.count(*it);
    if (got < want) lost.push_back(*it);
    if (got > want) duplicated.push_back(*it);
  }
  for (auto it = actual.begin(); it != actual.end();
       it = actual.upper_bound(*it)) {
    if (expected.count(*it) == 0) unexpected.push_back(*it);
  }
  if (lost.empty() && duplicated.empty() && unexpected.empty()) {
    return ::testing::AssertionSuccess();
  }
  auto first = [](const std::vector<std::string>& v) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < 10; ++i) out += " " + v[i];
    return out + (v.size() > 10 ? " ..." : "");
  };
  return ::testing::AssertionFailure()
         << actual.size() << " records, " << expected.size() << " expected; "
         << lost.size() << " lost:" << first(lost) << "; " << duplicated.size()
         << " duplicated:" << first(duplicated) << "; " << unexpected.size()
         << " unexpected:" << first(unexpected);
}

class SdkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = TestCluster::Start();
    ASSERT_NE(cluster_, nullptr) << "could not start a test cluster";
  }

  std::string bootstrap() const { return cluster_->bootstrap_servers(); }

  // A topic of its own for this test.
  std::string NewTopic(const std::string& prefix, int partitions = 3) {
    std::string topic = TestCluster::UniqueName(prefix);
    absl::Status s = cluster_->CreateTopic(topic, partitions);
    EXPECT_TRUE(s.ok()) << s;
    return topic;
  }

  ProducerOptions ProducerOpts() const {
    ProducerOptions o;
    o.bootstrap_servers = bootstrap();
    o.properties["linger.ms"] = "5";
    return o;
  }

  ProducerOptions TransactionalOpts(const std::string& txn_id) const {
    ProducerOptions o = ProducerOpts();
    o.transactional_id = txn_id;
    o.properties["transaction.timeout.ms"] = "10000";
    o.retry.initial_backoff = std::chrono::milliseconds(20);
    return o;
  }

  ConsumerOptions ConsumerOpts(const std::string& group) const {
    ConsumerOptions o;
    o.bootstrap_servers = bootstrap();
    o.group_id = group;
    o.properties["session.timeout.ms"] = "6000";
    o.properties["heartbeat.interval.ms"] = "500";
    return o;
  }

  // Writes key=value records (partition chosen by key) and waits for them.
  void Produce(const std::string& topic,
               const std::vector<std::pair<std::string, std::string>>& kvs) {
    auto producer = Producer::Create(ProducerOpts());
    ASSERT_TRUE(producer.ok()) << producer.status();
    for (const auto& [k, v] : kvs) {
      ASSERT_TRUE(
          (*producer)->Send({.topic = topic, .key = k, .value = v}).ok());
    }
    absl::Status s = (*producer)->Flush(std::chrono::seconds(30));
    ASSERT_TRUE(s.ok()) << s;
  }

  // Every record of `topic` a read_committed consumer sees. An end marker
  // is written to each partition first and the topic read up to the
  // markers, so the answer is complete, not "what arrived in time".
  std::vector<ReadRecord> ReadCommitted(const std::string& topic,
                                        int partitions) {
    const std::string token = TestCluster::UniqueName("end");
    {
      auto producer = Producer::Create(ProducerOpts());
      EXPECT_TRUE(producer.ok()) << producer.status();
      if (!producer.ok()) return {};
      for (int p = 0; p < partitions; ++p) {
        EXPECT_TRUE((*producer)
                        ->Send({.topic = topic,
                                .key = kEndKey,
                                .value = token,
                                .partition = p})
                        .ok());
      }
      absl::Status s = (*producer)->Flush(std::chrono::seconds(30));
      EXPECT_TRUE(s.ok()) << s;
    }
    auto consumer =
        Consumer::Create(ConsumerOpts(TestCluster::UniqueName("reader")));
    EXPECT_TRUE(consumer.ok()) << consumer.status();
    if (!consumer.ok()) return {};
    EXPECT_TRUE((*consumer)->Subscribe({topic}).ok());
    std::vector<ReadRecord> out;
    std::set<std::pair<int32_t, int64_t>> read;  // (partition, offset)
    std::set<int32_t> ended;
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (static_cast<int>(ended.size()) < partitions &&
           std::chrono::steady_clock::now() < deadline) {
      auto m = (*consumer)->Poll(std::chrono::milliseconds(200));
      EXPECT_TRUE(m.ok()) << m.status();
      if (!m.ok()) break;
      if (!m->has_value()) continue;
      const Message& msg = **m;
      if (msg.key() == kEndKey) {
        if (msg.value() == token) ended.insert(msg.partition());
        continue;
      }
      // A record read again after the reader's group rebalanced (it starts
      // over: no committed offsets) is the same record, not a duplicate.
      if (!read.insert({msg.partition(), msg.offset()}).second) continue;
      out.push_back({std::string(msg.key()), std::string(msg.value()),
                     msg.partition(), msg.offset()});
    }
    EXPECT_EQ(static_cast<int>(ended.size()), partitions)
        << "did not read " << topic << " to its end markers";
    return out;
  }

  // Reads `topic` read_committed, in a group of its own, until `n` distinct
  // values were seen or `patience` passed; returns how many were. Distinct
  // values, not records: a reader whose group rebalances (its coordinator
  // restarted) reads again from the start, and counting records twice would
  // call an unfinished output complete. `each_poll` runs between polls (to
  // check that the writer is still alive); a fatal failure in it ends the
  // wait.
  size_t AwaitDistinctValues(const std::string& topic, size_t n,
                             std::chrono::seconds patience,
                             const std::function<void()>& each_poll = {}) {
    auto reader = Consumer::Create(ConsumerOpts(TestCluster::UniqueName("w")));
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) return 0;
    EXPECT_TRUE((*reader)->Subscribe({topic}).ok());
    std::set<std::string> seen;
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (seen.size() < n && std::chrono::steady_clock::now() < deadline) {
      auto batch = (*reader)->PollBatch(500, std::chrono::milliseconds(200));
      EXPECT_TRUE(batch.ok()) << batch.status();
      if (!batch.ok()) break;
      for (const Message& m : *batch) seen.insert(std::string(m.value()));
      if (each_poll) each_poll();
      if (::testing::Test::HasFatalFailure()) break;
    }
    return seen.size();
  }

  static std::multiset<std::string> Values(const std::vector<ReadRecord>& rs) {
    std::multiset<std::string> out;
    for (const ReadRecord& r : rs) out.insert(r.value);
    return out;
  }

  static constexpr char kEndKey[] = "__end__";

  std::unique_ptr<TestCluster> cluster_;
};

#define SKIP_WITHOUT_TRANSACTIONS()                                       \
  if (!cluster_->has_transactions())                                      \
  GTEST_SKIP() << "needs the bundled broker: this cluster writes no "     \
                  "transaction markers, ignores read_committed and does " \
                  "not fence zombies"

#define SKIP_WITHOUT_FAULT_INJECTION()                                        \
  if (!cluster_->has_fault_injection())                                       \
  GTEST_SKIP() << "needs a cluster with fault injection (the bundled broker " \
                  "or the mock cluster)"

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_INTEGRATION_SDK_SDK_TEST_UTIL_H_
