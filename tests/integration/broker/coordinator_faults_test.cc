// Faults aimed at the coordinators of a cluster (issue 20), with librdkafka
// clients and counted records: Cluster::KillCoordinator kills exactly the
// broker FindCoordinator names for a transactional id or a group (also from
// the admin port), and Faults::HoldMarkers keeps a committed transaction's
// marker on its partition's leader, unapplied, so that read_committed readers
// see nothing of it until the marker is released, or until that leader dies
// and the coordinator delivers the marker to the new one. Nothing asserts on
// a duration: outcomes are polled for until generous deadlines.
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "admin/cluster_admin_commands.h"
#include "exactly/broker/cluster.h"
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

// Waits (bounded, generously for sanitizer builds) until `done` holds.
template <class Pred>
bool Eventually(Pred done, int seconds = 60) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < give_up) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

void ExpectOk(rd_kafka_error_t* error, const char* what) {
  EXPECT_EQ(error, nullptr)
      << what << ": " << (error ? rd_kafka_error_string(error) : "");
  if (error != nullptr) rd_kafka_error_destroy(error);
}

// How many times each value was read.
std::map<std::string, int> Counts(const std::vector<ConsumedRecord>& read) {
  std::map<std::string, int> counts;
  for (const ConsumedRecord& r : read) ++counts[r.value];
  return counts;
}

class CoordinatorFaultsTest
    : public ::exactly::testing::ThreeBrokerClusterTest {
 protected:
  // FindCoordinator v1 asked of broker `node`: the coordinator's node id, or
  // -1 (an error, expected only when `may_fail`: its coordinator is down).
  int32_t FindCoordinator(int32_t node, int8_t key_type, const std::string& key,
                          bool may_fail = false) {
    return ::exactly::testing::FindCoordinatorAt(port(node), key_type, key,
                                                 may_fail);
  }

  RdKafkaPtr TransactionalProducer(const std::string& id) {
    RdKafkaPtr producer =
        NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_},
                                      {"transactional.id", id},
                                      {"linger.ms", "0"}});
    if (producer)
      ExpectOk(rd_kafka_init_transactions(producer.get(), 120000), "init");
    return producer;
  }

  // One committed transaction of `count` records "<prefix>-i" on
  // `topic`[`partition`].
  std::vector<std::string> CommitTransaction(rd_kafka_t* producer,
                                             const std::string& topic,
                                             int32_t partition, int count,
                                             const std::string& prefix) {
    std::vector<std::string> values;
    ExpectOk(rd_kafka_begin_transaction(producer), "begin");
    for (int i = 0; i < count; ++i) {
      values.push_back(absl::StrCat(prefix, "-", i));
      EXPECT_EQ(ProduceOne(producer, topic, partition, "k", values.back()),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ExpectOk(rd_kafka_commit_transaction(producer, 120000), "commit");
    return values;
  }

  // A partition of `topic` (of `partitions`) whose leader is not `avoid`.
  int32_t PartitionNotLedBy(const std::string& topic, int32_t partitions,
                            int32_t avoid) {
    for (int32_t p = 0; p < partitions; ++p) {
      auto d = cluster_->DescribePartition(topic, p);
      EXPECT_TRUE(d.ok()) << d.status();
      if (d.ok() && d->leader > 0 && d->leader != avoid) return p;
    }
    return -1;
  }

  int32_t LeaderOf(const std::string& topic, int32_t partition) {
    auto d = cluster_->DescribePartition(topic, partition);
    return d.ok() ? d->leader : -1;
  }
};

TEST_F(CoordinatorFaultsTest, KillCoordinatorKillsTheTransactionCoordinator) {
  ASSERT_TRUE(cluster_->CreateTopic("kc", 1, 3).ok());
  const std::string id = "kill-coordinator-writer";
  RdKafkaPtr producer = TransactionalProducer(id);
  ASSERT_TRUE(producer);
  CommitTransaction(producer.get(), "kc", 0, 5, "before");

  // Every broker names the same coordinator.
  const int32_t named =
      FindCoordinator(1, protocol::kCoordinatorKeyTransaction, id);
  ASSERT_GT(named, 0);
  for (int32_t node = 2; node <= 3; ++node)
    EXPECT_EQ(FindCoordinator(node, protocol::kCoordinatorKeyTransaction, id),
              named);

  absl::StatusOr<int32_t> killed =
      cluster_->KillCoordinator(CoordinatorKey::kTransaction, id);
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(*killed, named);
  for (int32_t node = 1; node <= 3; ++node)
    EXPECT_EQ(cluster_->broker(node).running(), node != named)
        << "broker " << node;
  EXPECT_EQ(cluster_->broker(named).faults().InjectedCounts()["kill"], 1);

  // The coordinator moved with the leadership of the id's __transaction_state
  // partition: another broker coordinates the id now, and the producer's next
  // transaction commits there while the old coordinator is down.
  const int32_t alive = named == 1 ? 2 : 1;
  int32_t moved = -1;
  ASSERT_TRUE(Eventually([&] {
    moved = FindCoordinator(alive, protocol::kCoordinatorKeyTransaction, id,
                            /*may_fail=*/true);
    return moved > 0;
  }));
  EXPECT_NE(moved, named);
  CommitTransaction(producer.get(), "kc", 0, 5, "after");
  int running = 0;
  for (int32_t node = 1; node <= 3; ++node)
    running += cluster_->broker(node).running();
  EXPECT_EQ(running, 2);

  // Killing the id's coordinator again kills the new one.
  absl::StatusOr<int32_t> again =
      cluster_->KillCoordinator(CoordinatorKey::kTransaction, id);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, moved);
  ASSERT_TRUE(cluster_->Restart(named, Broker::RestartMode::kCrash).ok());
  ASSERT_TRUE(cluster_->Restart(moved, Broker::RestartMode::kCrash).ok());
  std::map<std::string, int> counts =
      Counts(ConsumeAll(bootstrap_, "kc", 1, "read_committed", 11, 5000));
  EXPECT_EQ(counts.size(), 10u);
  for (const auto& [value, count] : counts) EXPECT_EQ(count, 1) << value;
}

TEST_F(CoordinatorFaultsTest, KillCoordinatorOfAGroupFromTheAdminPort) {
  // The first question about a transactional id creates __transaction_state
  // (replication factor 3): asked now, while all three brokers run, as Kafka
  // too needs them to create it.
  ASSERT_GT(FindCoordinator(1, protocol::kCoordinatorKeyTransaction, "warm"),
            0);
  const std::string group = "kill-coordinator-group";
  const int32_t named =
      FindCoordinator(2, protocol::kCoordinatorKeyGroup, group);
  ASSERT_GT(named, 0);
  EXPECT_EQ(RunClusterAdminCommand(
                *cluster_, absl::StrCat("kill-coordinator group=", group)),
            absl::StrCat("ok node=", named));
  for (int32_t node = 1; node <= 3; ++node)
    EXPECT_EQ(cluster_->broker(node).running(), node != named)
        << "broker " << node;
  // The coordinator moved with the leadership of the group's
  // __consumer_offsets partition: another broker names a live coordinator,
  // and killing the group's coordinator again kills that one.
  const int32_t alive = named == 1 ? 2 : 1;
  int32_t moved = -1;
  ASSERT_TRUE(Eventually([&] {
    moved = FindCoordinator(alive, protocol::kCoordinatorKeyGroup, group,
                            /*may_fail=*/true);
    return moved > 0;
  }));
  EXPECT_NE(moved, named);
  EXPECT_EQ(RunClusterAdminCommand(
                *cluster_, absl::StrCat("kill-coordinator group=", group)),
            absl::StrCat("ok node=", moved));
  ASSERT_TRUE(cluster_->Restart(named, Broker::RestartMode::kCrash).ok());
  ASSERT_TRUE(cluster_->Restart(moved, Broker::RestartMode::kCrash).ok());
  // The arguments are checked.
  for (const char* bad :
       {"kill-coordinator", "kill-coordinator group=a transactional-id=b",
        "kill-coordinator group=a node=1", "kill-coordinator group=a x=1"}) {
    EXPECT_EQ(RunClusterAdminCommand(*cluster_, bad).rfind("error: ", 0), 0u)
        << bad;
  }
  // A transactional id coordinated by a running broker, by name.
  std::string id;
  int32_t txn_coordinator = -1;
  for (int i = 0; i < 100 && id.empty(); ++i) {
    std::string candidate = absl::StrCat("writer-", i);
    // Asked of a running broker; keys of the killed one have none.
    const int32_t node = FindCoordinator(
        named == 1 ? 2 : 1, protocol::kCoordinatorKeyTransaction, candidate,
        /*may_fail=*/true);
    if (node > 0 && node != named) {
      id = candidate;
      txn_coordinator = node;
    }
  }
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(
      RunClusterAdminCommand(
          *cluster_, absl::StrCat("kill-coordinator transactional-id=", id)),
      absl::StrCat("ok node=", txn_coordinator));
  EXPECT_FALSE(cluster_->broker(txn_coordinator).running());
}

// Hold markers on a leader, commit, and the transaction stays invisible;
// release, and it appears once.
TEST_F(CoordinatorFaultsTest, HeldMarkersAreAppliedAtTheirRelease) {
  constexpr int32_t kPartitions = 3;
  constexpr int kRecords = 20;
  ASSERT_TRUE(cluster_
                  ->CreateTopic("released", kPartitions, 3,
                                {{"min.insync.replicas", "2"}})
                  .ok());
  const std::string id = "released-writer";
  const int32_t coordinator =
      FindCoordinator(1, protocol::kCoordinatorKeyTransaction, id);
  ASSERT_GT(coordinator, 0);
  const int32_t partition =
      PartitionNotLedBy("released", kPartitions, coordinator);
  ASSERT_GE(partition, 0);
  const int32_t leader = LeaderOf("released", partition);
  Faults& faults = cluster_->broker(leader).faults();
  faults.HoldMarkers();

  RdKafkaPtr producer = TransactionalProducer(id);
  ASSERT_TRUE(producer);
  std::vector<std::string> first =
      CommitTransaction(producer.get(), "released", partition, kRecords, "a");
  ASSERT_TRUE(Eventually([&] { return faults.held_marker_requests() >= 1; }));
  // The records are there, the transaction still open: the last stable
  // offset stays at its first record.
  auto offsets = cluster_->broker(leader).Offsets("released", partition);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_EQ(offsets->last_stable_offset, 0);
  EXPECT_EQ(offsets->log_end_offset, kRecords);
  EXPECT_TRUE(
      ConsumeAll(bootstrap_, "released", kPartitions, "read_committed", 1, 2000)
          .empty());

  faults.ReleaseMarkers();
  ASSERT_TRUE(Eventually([&] {
    auto o = cluster_->broker(leader).Offsets("released", partition);
    return o.ok() && o->last_stable_offset == o->high_watermark &&
           o->high_watermark > kRecords;  // the records and the marker
  }));
  std::map<std::string, int> counts = Counts(ConsumeAll(
      bootstrap_, "released", kPartitions, "read_committed", kRecords + 1));
  EXPECT_EQ(counts.size(), static_cast<size_t>(kRecords));
  for (const std::string& v : first) EXPECT_EQ(counts[v], 1) << v;
  EXPECT_EQ(faults.held_marker_requests(), 0);
  EXPECT_GE(faults.InjectedCounts()["held_marker_request"], 1);
  // Nothing held any more: the next transaction commits and shows.
  std::vector<std::string> second =
      CommitTransaction(producer.get(), "released", partition, kRecords, "b");
  counts = Counts(ConsumeAll(bootstrap_, "released", kPartitions,
                             "read_committed", 2 * kRecords + 1));
  EXPECT_EQ(counts.size(), static_cast<size_t>(2 * kRecords));
  for (const std::string& v : second) EXPECT_EQ(counts[v], 1) << v;
}

// The scenario: a committed transaction's marker held on the
// partition's leader X (not the coordinator), X killed with it; the
// coordinator's retries deliver the marker to the new leader. Every record
// of the transaction is read once, none before the kill, and the producer's
// next transaction commits.
TEST_F(CoordinatorFaultsTest, MarkersHeldOnAKilledLeaderReachTheNewLeader) {
  constexpr int32_t kPartitions = 3;
  constexpr int kRecords = 50;
  ASSERT_TRUE(
      cluster_
          ->CreateTopic("held", kPartitions, 3, {{"min.insync.replicas", "2"}})
          .ok());
  const std::string id = "held-writer";
  const int32_t coordinator =
      FindCoordinator(1, protocol::kCoordinatorKeyTransaction, id);
  ASSERT_GT(coordinator, 0);
  const int32_t partition = PartitionNotLedBy("held", kPartitions, coordinator);
  ASSERT_GE(partition, 0);
  const int32_t x = LeaderOf("held", partition);
  ASSERT_NE(x, coordinator);
  ASSERT_EQ(
      RunClusterAdminCommand(*cluster_, absl::StrCat("hold-markers node=", x)),
      "ok");

  RdKafkaPtr producer = TransactionalProducer(id);
  ASSERT_TRUE(producer);
  // EndTxn is answered once PrepareCommit is persisted: the commit returns
  // while the marker waits on X.
  std::vector<std::string> first =
      CommitTransaction(producer.get(), "held", partition, kRecords, "first");
  Faults& faults = cluster_->broker(x).faults();
  ASSERT_TRUE(Eventually([&] { return faults.held_marker_requests() >= 1; }));
  auto offsets = cluster_->broker(x).Offsets("held", partition);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_EQ(offsets->last_stable_offset, 0);
  EXPECT_EQ(offsets->log_end_offset, kRecords);
  EXPECT_TRUE(
      ConsumeAll(bootstrap_, "held", kPartitions, "read_committed", 1, 2000)
          .empty());

  ASSERT_TRUE(cluster_->Kill(x).ok());
  EXPECT_EQ(faults.held_marker_requests(), 0);  // dropped with the broker
  int32_t successor = -1;
  ASSERT_TRUE(Eventually([&] {
    successor = LeaderOf("held", partition);
    return successor > 0 && successor != x;
  }));

  // The coordinator sends the marker again, to the new leader, which
  // commits the transaction there (a deadline, not a timing assertion)...
  ASSERT_TRUE(Eventually([&] {
    auto o = cluster_->broker(successor).Offsets("held", partition);
    return o.ok() && o->last_stable_offset == o->high_watermark &&
           o->high_watermark > kRecords;  // the records and the marker
  }));
  // ... and read_committed sees every record once.
  std::map<std::string, int> counts = Counts(ConsumeAll(
      bootstrap_, "held", kPartitions, "read_committed", kRecords + 1, 10000));
  EXPECT_EQ(counts.size(), static_cast<size_t>(kRecords));
  for (const std::string& v : first) EXPECT_EQ(counts[v], 1) << v;

  // The coordinator completed the commit: the next transaction commits (on
  // two brokers, min.insync.replicas 2).
  std::vector<std::string> second =
      CommitTransaction(producer.get(), "held", partition, kRecords, "second");
  counts = Counts(ConsumeAll(bootstrap_, "held", kPartitions, "read_committed",
                             2 * kRecords + 1, 10000));
  EXPECT_EQ(counts.size(), static_cast<size_t>(2 * kRecords));
  for (const std::string& v : first) EXPECT_EQ(counts[v], 1) << v;
  for (const std::string& v : second) EXPECT_EQ(counts[v], 1) << v;
  // X's history says what happened to the marker it held.
  bool dropped = false;
  for (const std::string& line : faults.History())
    dropped |= line.find("dropped unapplied") != std::string::npos;
  EXPECT_TRUE(dropped);
}

}  // namespace
}  // namespace exactly::broker
