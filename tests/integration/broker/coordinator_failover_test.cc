// The transaction coordinator fails over with its broker (issue 20): its state
// is in __transaction_state, replicated like any partition, and the new leader
// of the transactional id's partition takes it up. A transaction left in
// PrepareCommit is finished by the next coordinator; a producer committing
// all along while the coordinator's broker is killed again and again loses
// and duplicates nothing. librdkafka drives it, as users' clients do; the
// records are counted with a read_committed consumer.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactly/broker/cluster.h"
#include "exactly/broker/faults.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "support/cluster_test.h"
#include "support/kafka_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::ConsumeAll;
using ::exactly::testing::ConsumedRecord;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;
using ::exactly::testing::Succeeded;

constexpr int32_t kPartitions = 3;

class CoordinatorFailoverTest
    : public ::exactly::testing::ThreeBrokerClusterTest {
 protected:
  void SetUp() override {
    ThreeBrokerClusterTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(cluster_
                    ->CreateTopic("orders", kPartitions, 3,
                                  {{"min.insync.replicas", "2"}})
                    .ok());
  }

  // The transaction coordinator of `id`, asked of a running broker; -1 while
  // there is none (its partition has no leader yet).
  int32_t Coordinator(const std::string& id) {
    for (int32_t node = 1; node <= 3; ++node) {
      if (!cluster_->broker(node).running()) continue;
      return ::exactly::testing::FindCoordinatorAt(
          port(node), protocol::kCoordinatorKeyTransaction, id,
          /*may_fail=*/true);
    }
    return -1;
  }

  // Waits until `id` has a coordinator; its node id.
  int32_t AwaitCoordinator(const std::string& id) {
    for (int i = 0; i < 600; ++i) {
      if (int32_t node = Coordinator(id); node > 0) return node;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }

  RdKafkaPtr Producer(const std::string& id) {
    return NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_},
                                         {"transactional.id", id},
                                         {"transaction.timeout.ms", "10000"},
                                         {"linger.ms", "1"}});
  }
};

TEST_F(CoordinatorFailoverTest, PreparedCommitIsFinishedByTheNextCoordinator) {
  const std::string id = "prepared-writer";
  RdKafkaPtr producer = Producer(id);
  ASSERT_TRUE(producer);
  ASSERT_TRUE(Succeeded(rd_kafka_init_transactions(producer.get(), 60000)));
  const int32_t first = AwaitCoordinator(id);
  ASSERT_GT(first, 0);

  // The coordinator persists PrepareCommit, answers, and writes no marker.
  cluster_->broker(first).faults().HoldTransactionMarkers();
  ASSERT_TRUE(Succeeded(rd_kafka_begin_transaction(producer.get())));
  std::set<std::string> committed;
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (int i = 0; i < 5; ++i) {
      std::string value = absl::StrCat("held-p", p, "-", i);
      ASSERT_EQ(ProduceOne(producer.get(), "orders", p, "k", value),
                RD_KAFKA_RESP_ERR_NO_ERROR);
      committed.insert(value);
    }
  }
  std::string error;
  ASSERT_TRUE(
      Succeeded(rd_kafka_commit_transaction(producer.get(), 60000), &error))
      << error;
  // No marker: a read_committed consumer sees nothing of it.
  EXPECT_TRUE(ConsumeAll(bootstrap_, "orders", kPartitions, "read_committed", 1,
                         /*idle_ms=*/1000)
                  .empty());

  // The coordinator dies; the new leader of the id's partition loads
  // PrepareCommit from the log and writes the markers.
  ASSERT_TRUE(cluster_->Kill(first).ok());
  const int32_t second = AwaitCoordinator(id);
  ASSERT_GT(second, 0);
  EXPECT_NE(second, first);
  std::vector<ConsumedRecord> read =
      ConsumeAll(bootstrap_, "orders", kPartitions, "read_committed",
                 committed.size(), /*idle_ms=*/20000);
  std::map<std::string, int> seen;
  for (const ConsumedRecord& r : read) ++seen[r.value];
  for (const std::string& value : committed) EXPECT_EQ(seen[value], 1) << value;
  EXPECT_EQ(read.size(), committed.size());

  // The same producer goes on with the new coordinator.
  ASSERT_TRUE(Succeeded(rd_kafka_begin_transaction(producer.get())));
  ASSERT_EQ(ProduceOne(producer.get(), "orders", 0, "k", "after"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_TRUE(
      Succeeded(rd_kafka_commit_transaction(producer.get(), 60000), &error))
      << error;
  EXPECT_EQ(ConsumeAll(bootstrap_, "orders", kPartitions, "read_committed",
                       committed.size() + 1, /*idle_ms=*/20000)
                .size(),
            committed.size() + 1);
  ASSERT_TRUE(cluster_->Restart(first, Broker::RestartMode::kCrash).ok());
}

// The test: a transactional producer commits every 50 ms while the
// broker coordinating its transactional id is killed 20 times (and restarted
// each time). Every committed transaction is read once, no aborted one at
// all, and the producer keeps committing.
TEST_F(CoordinatorFailoverTest, CommitsSurviveTwentyCoordinatorKills) {
  constexpr int kKills = 20;
  const std::string id = "steady-writer";
  RdKafkaPtr producer = Producer(id);
  ASSERT_TRUE(producer);
  ASSERT_TRUE(Succeeded(rd_kafka_init_transactions(producer.get(), 60000)));

  std::atomic<bool> stop{false};
  std::atomic<int> commits{0};
  std::set<std::string> committed;
  std::set<std::string> aborted;
  std::string fatal;
  int64_t slowest_commit_ms = 0;
  std::thread writer([&] {
    for (int txn = 0; !stop.load() && fatal.empty(); ++txn) {
      const auto started = std::chrono::steady_clock::now();
      if (!Succeeded(rd_kafka_begin_transaction(producer.get()), &fatal)) break;
      std::set<std::string> values;
      for (int32_t p = 0; p < kPartitions; ++p) {
        std::string value = absl::StrCat("txn-", txn, "-p", p);
        if (ProduceOne(producer.get(), "orders", p, "k", value) !=
            RD_KAFKA_RESP_ERR_NO_ERROR) {
          fatal = "produce failed";
          break;
        }
        values.insert(value);
      }
      if (!fatal.empty()) break;
      // Commit, retrying what librdkafka says may be retried; abort what it
      // says must be aborted.
      bool done = false;
      for (int attempt = 0; !done && attempt < 100; ++attempt) {
        rd_kafka_error_t* e =
            rd_kafka_commit_transaction(producer.get(), 30000);
        if (e == nullptr) {
          committed.insert(values.begin(), values.end());
          commits.fetch_add(1);
          done = true;
        } else if (rd_kafka_error_is_retriable(e)) {
          rd_kafka_error_destroy(e);
        } else if (rd_kafka_error_txn_requires_abort(e)) {
          rd_kafka_error_destroy(e);
          std::string why;
          while (!Succeeded(rd_kafka_abort_transaction(producer.get(), 30000),
                            &why)) {
            if (stop.load()) break;
          }
          aborted.insert(values.begin(), values.end());
          done = true;
        } else {
          fatal = rd_kafka_error_string(e);
          rd_kafka_error_destroy(e);
          return;
        }
      }
      if (!done) {
        fatal = "commit never settled";
        return;
      }
      slowest_commit_ms = std::max<int64_t>(
          slowest_commit_ms,
          std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::steady_clock::now() - started)
              .count());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });

  // Waits (generously: no timing is asserted) for `n` more commits.
  auto await_commits = [&](int n) {
    const int target = commits.load() + n;
    for (int i = 0; i < 2400 && commits.load() < target && fatal.empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return commits.load() >= target;
  };
  ASSERT_TRUE(await_commits(3)) << fatal;
  std::set<int32_t> killed;
  for (int kill = 0; kill < kKills && fatal.empty(); ++kill) {
    const int32_t node = AwaitCoordinator(id);
    ASSERT_GT(node, 0) << "kill " << kill;
    ASSERT_TRUE(cluster_->Kill(node).ok());
    killed.insert(node);
    EXPECT_TRUE(await_commits(2))
        << "no commit after kill " << kill << ": " << fatal;
    ASSERT_TRUE(cluster_->Restart(node, Broker::RestartMode::kCrash).ok());
    EXPECT_TRUE(await_commits(1)) << "kill " << kill << ": " << fatal;
  }
  stop = true;
  writer.join();
  ASSERT_TRUE(fatal.empty()) << fatal;
  EXPECT_GE(killed.size(), 2u) << "the coordinator never moved";
  std::cout << commits.load() << " commits, " << aborted.size() / kPartitions
            << " aborts, slowest transaction " << slowest_commit_ms
            << " ms, through " << kKills << " coordinator kills\n";

  std::vector<ConsumedRecord> read =
      ConsumeAll(bootstrap_, "orders", kPartitions, "read_committed",
                 committed.size(), /*idle_ms=*/20000);
  std::map<std::string, int> seen;
  for (const ConsumedRecord& r : read) ++seen[r.value];
  size_t missing = 0;
  for (const std::string& value : committed) missing += !seen.contains(value);
  for (const auto& [value, count] : seen) {
    EXPECT_EQ(count, 1) << "duplicated: " << value;
    EXPECT_FALSE(aborted.contains(value)) << "aborted record read: " << value;
  }
  EXPECT_EQ(missing, 0u) << "of " << committed.size() << " committed";
  EXPECT_EQ(read.size(), committed.size());
}

}  // namespace
}  // namespace exactly::broker
