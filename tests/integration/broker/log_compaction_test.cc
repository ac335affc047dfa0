// The log cleaner (cluster/log_cleaner.h) on a running broker, driven by
// librdkafka: a compacted topic keeps the latest value of every key at its
// offset, across a restart and for the same idempotent producer; the
// coordinators' own logs are compacted and still fail over; a follower that
// was down copies a compacted leader's log, gaps and all, and can lead.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "support/cluster_test.h"
#include "support/kafka_client.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::AwaitLiveCoordinator;
using ::exactly::testing::ConsumeAll;
using ::exactly::testing::ConsumedRecord;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;
using ::exactly::testing::Succeeded;

constexpr int kKeys = 20;
constexpr int kRounds = 30;
constexpr char kTable[] = "table";

// Small segments so that most of a test-sized log is cleanable; the cleaner
// looks every 50 ms.
const std::map<std::string, std::string> kCompacted = {
    {"cleanup.policy", "compact"},
    {"segment.bytes", "1024"},
    {"delete.retention.ms", "200"}};

std::string Key(int k) { return absl::StrCat("key-", k); }
std::string Value(int k, int round) {
  return absl::StrCat("key-", k, "-round-", round);
}

// Writes every key once per round, `rounds` rounds from `first_round`,
// through `producer` (idempotent, acks=all), a batch or so per round (each
// round is acknowledged before the next), so that segments of 1 KiB roll.
void WriteRounds(rd_kafka_t* producer, int first_round, int rounds,
                 int first_key = 0) {
  for (int r = first_round; r < first_round + rounds; ++r) {
    for (int k = first_key; k < kKeys; ++k)
      ASSERT_EQ(ProduceOne(producer, kTable, 0, Key(k), Value(k, r)),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(rd_kafka_flush(producer, 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
}

// Records held in a partition's log, control records excluded.
size_t RecordsIn(const Broker& broker, const std::string& topic, int32_t p) {
  absl::StatusOr<std::vector<LoggedBatch>> log = broker.ReadLog(topic, p);
  if (!log.ok()) return 0;
  size_t n = 0;
  for (const LoggedBatch& b : *log)
    if (!b.control) n += b.records.size();
  return n;
}

// Waits (up to 60 s) until `done` holds.
template <class F>
bool Eventually(F done) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

// Checks what a reader from the start sees: offsets rising, and each key's
// last value the one written last.
void ExpectLatestValues(const std::vector<ConsumedRecord>& records,
                        int last_round) {
  std::map<std::string, std::string> last;
  int64_t previous = -1;
  for (const ConsumedRecord& r : records) {
    EXPECT_GT(r.offset, previous);
    previous = r.offset;
    last[r.key] = r.value;
  }
  ASSERT_EQ(last.size(), static_cast<size_t>(kKeys));
  for (int k = 0; k < kKeys; ++k)
    EXPECT_EQ(last[Key(k)], Value(k, last_round)) << Key(k);
}

// Each key's last record: key -> (offset, value).
std::map<std::string, std::pair<int64_t, std::string>> LastOfEachKey(
    const std::vector<ConsumedRecord>& records) {
  std::map<std::string, std::pair<int64_t, std::string>> out;
  for (const ConsumedRecord& r : records) out[r.key] = {r.offset, r.value};
  return out;
}

std::vector<std::tuple<int64_t, std::string, std::string>> Flatten(
    const std::vector<ConsumedRecord>& records) {
  std::vector<std::tuple<int64_t, std::string, std::string>> out;
  for (const ConsumedRecord& r : records)
    out.emplace_back(r.offset, r.key, r.value);
  return out;
}

TEST(LogCompactionTest, ACompactedTopicKeepsEachKeysLatestValueAcrossRestart) {
  ::exactly::testing::TempDir dir;
  BrokerOptions options;
  options.data_dir = dir.path();
  options.log_cleaner_backoff_ms = 50;
  auto broker = Broker::Start(options);
  ASSERT_TRUE(broker.ok()) << broker.status();
  ASSERT_TRUE((*broker)->CreateTopic(kTable, 1, kCompacted).ok());
  const std::string bootstrap = (*broker)->bootstrap_servers();

  RdKafkaPtr producer =
      NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                    {"enable.idempotence", "true"},
                                    {"linger.ms", "0"}});
  ASSERT_TRUE(producer);
  WriteRounds(producer.get(), 0, kRounds);
  const size_t written = kKeys * kRounds;
  // The cleaner takes the superseded values out of all but the last segment.
  ASSERT_TRUE(Eventually([&] {
    return RecordsIn(**broker, kTable, 0) < written / 2;
  })) << RecordsIn(**broker, kTable, 0)
      << " of " << written << " left";
  // The same idempotent producer goes on: its last batch kept its sequence.
  WriteRounds(producer.get(), kRounds, 1);

  absl::StatusOr<PartitionOffsets> offsets = (*broker)->Offsets(kTable, 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->log_start_offset, 0);
  EXPECT_EQ(offsets->log_end_offset,
            static_cast<int64_t>(written + kKeys));  // offsets never move
  std::vector<ConsumedRecord> before =
      ConsumeAll(bootstrap, kTable, 1, "read_uncommitted", written, 3000);
  EXPECT_LT(before.size(), written);
  ExpectLatestValues(before, kRounds);

  // A restart reads the compacted log back from the store: the same records
  // at the same offsets, the log start where it was.
  producer.reset();
  ASSERT_TRUE((*broker)->Restart(Broker::RestartMode::kClean).ok());
  offsets = (*broker)->Offsets(kTable, 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->log_start_offset, 0);
  // (The cleaner may have gone on between the two reads: nothing new, and
  // the same last record of each key.)
  std::vector<ConsumedRecord> after =
      ConsumeAll((*broker)->bootstrap_servers(), kTable, 1, "read_uncommitted",
                 before.size(), 3000);
  ExpectLatestValues(after, kRounds);
  const auto all_before = Flatten(before);
  for (const auto& record : Flatten(after))
    EXPECT_TRUE(std::find(all_before.begin(), all_before.end(), record) !=
                all_before.end())
        << std::get<0>(record);
  EXPECT_EQ(LastOfEachKey(after), LastOfEachKey(before));
}

TEST(LogCompactionTest, ATombstoneIsReadUntilItsDeleteRetentionPasses) {
  BrokerOptions options;
  options.log_cleaner_backoff_ms = 50;
  auto broker = Broker::Start(options);
  ASSERT_TRUE(broker.ok()) << broker.status();
  std::map<std::string, std::string> configs = kCompacted;
  configs["delete.retention.ms"] = "2000";
  ASSERT_TRUE((*broker)->CreateTopic(kTable, 1, configs).ok());
  RdKafkaPtr producer = NewClient(
      RD_KAFKA_PRODUCER, {{"bootstrap.servers", (*broker)->bootstrap_servers()},
                          {"enable.idempotence", "true"}});
  ASSERT_TRUE(producer);
  WriteRounds(producer.get(), 0, 2);
  // Delete key-0: a record with a key and no value.
  const std::string deleted = Key(0);
  ASSERT_EQ(rd_kafka_producev(producer.get(), RD_KAFKA_V_TOPIC(kTable),
                              RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_KEY(deleted.data(), deleted.size()),
                              RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  // Enough after it (of the other keys) that the tombstone leaves the active
  // segment.
  WriteRounds(producer.get(), 2, 10, /*first_key=*/1);

  auto key0 = [&](bool* tombstone) {
    int values = 0;
    *tombstone = false;
    absl::StatusOr<std::vector<LoggedBatch>> log =
        (*broker)->ReadLog(kTable, 0);
    if (!log.ok()) return -1;
    for (const LoggedBatch& b : *log)
      for (const LoggedRecord& r : b.records)
        if (r.key == deleted) {
          if (r.value)
            ++values;
          else
            *tombstone = true;
        }
    return values;
  };
  // First the cleaner takes key-0's values and keeps the tombstone, stamped
  // to stay delete.retention.ms (2 s here) so that a reader from the start
  // still learns of the delete...
  bool tombstone = false;
  ASSERT_TRUE(Eventually([&] { return key0(&tombstone) == 0 && tombstone; }));
  // ...then a clean after that horizon takes the tombstone too.
  ASSERT_TRUE(Eventually([&] { return key0(&tombstone) == 0 && !tombstone; }));
  // The other keys keep their last value.
  absl::StatusOr<std::vector<LoggedBatch>> log = (*broker)->ReadLog(kTable, 0);
  ASSERT_TRUE(log.ok());
  std::map<std::string, std::string> last;
  for (const LoggedBatch& b : *log)
    for (const LoggedRecord& r : b.records)
      if (r.key && r.value) last[*r.key] = *r.value;
  EXPECT_EQ(last.size(), static_cast<size_t>(kKeys - 1));
  for (int k = 1; k < kKeys; ++k) EXPECT_EQ(last[Key(k)], Value(k, 11));
}

class CompactionClusterTest : public ::testing::Test {
 protected:
  void StartCluster() {
    ClusterOptions o{.brokers = 3};
    o.broker.data_dir = dir_.path();
    o.broker.log_cleaner_backoff_ms = 50;
    o.broker.coordinator_segment_bytes = 2048;
    auto cluster = Cluster::Start(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    bootstrap_ = cluster_->bootstrap_servers();
  }

  // Records in all 50 partitions of an internal topic on `node`.
  size_t InternalRecords(int32_t node, const std::string& topic) {
    size_t n = 0;
    for (int32_t p = 0; p < 50; ++p)
      n += RecordsIn(cluster_->broker(node), topic, p);
    return n;
  }

  ::exactly::testing::TempDir dir_;
  std::unique_ptr<Cluster> cluster_;
  std::string bootstrap_;
};

TEST_F(CompactionClusterTest, CoordinatorLogsAreCompactedAndStillFailOver) {
  StartCluster();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(cluster_->CreateTopic("events", 1, 3, {}).ok());
  const std::string group = "compacted-group";
  const std::string txn_id = "compacted-txn";
  constexpr int kCommits = 300;
  constexpr int kTransactions = 100;

  // A group commits the offset of events[0] 300 times.
  RdKafkaPtr committer =
      NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap_},
                                    {"group.id", group},
                                    {"enable.auto.commit", "false"}});
  ASSERT_TRUE(committer);
  for (int i = 1; i <= kCommits; ++i) {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, "events", 0)->offset = i;
    ASSERT_EQ(rd_kafka_commit(committer.get(), list, /*async=*/0),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(list);
  }
  committer.reset();
  // A transactional producer commits 100 transactions of one record each.
  RdKafkaPtr producer = NewClient(
      RD_KAFKA_PRODUCER,
      {{"bootstrap.servers", bootstrap_}, {"transactional.id", txn_id}});
  ASSERT_TRUE(producer);
  ASSERT_TRUE(Succeeded(rd_kafka_init_transactions(producer.get(), 30000)));
  auto commit_one = [&](int i) {
    ASSERT_TRUE(Succeeded(rd_kafka_begin_transaction(producer.get())));
    ASSERT_EQ(
        ProduceOne(producer.get(), "events", 0, "k", absl::StrCat("txn-", i)),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    std::string what;
    ASSERT_TRUE(
        Succeeded(rd_kafka_commit_transaction(producer.get(), 30000), &what))
        << what;
  };
  for (int i = 0; i < kTransactions; ++i) {
    commit_one(i);
    if (HasFatalFailure()) return;
  }

  // Both coordinators' logs shrink to about a record per key.
  const int32_t group_coordinator =
      AwaitLiveCoordinator(*cluster_, protocol::kCoordinatorKeyGroup, group);
  const int32_t txn_coordinator = AwaitLiveCoordinator(
      *cluster_, protocol::kCoordinatorKeyTransaction, txn_id);
  ASSERT_GT(group_coordinator, 0);
  ASSERT_GT(txn_coordinator, 0);
  ASSERT_TRUE(Eventually([&] {
    return InternalRecords(group_coordinator, "__consumer_offsets") <
           kCommits / 4;
  })) << InternalRecords(group_coordinator, "__consumer_offsets");
  ASSERT_TRUE(Eventually([&] {
    return InternalRecords(txn_coordinator, "__transaction_state") <
           kTransactions;  // each transaction wrote at least three
  })) << InternalRecords(txn_coordinator, "__transaction_state");

  // The next coordinators load the compacted logs: the last commit, and the
  // transactional id's producer, which commits once more.
  ASSERT_TRUE(cluster_->KillCoordinator(CoordinatorKey::kGroup, group).ok());
  RdKafkaPtr reader =
      NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap_},
                                    {"group.id", group},
                                    {"enable.auto.commit", "false"}});
  ASSERT_TRUE(reader);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, "events", 0);
  ASSERT_EQ(rd_kafka_committed(reader.get(), list, 30000),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(list->elems[0].offset, kCommits);
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_consumer_close(reader.get());

  // The group's broker comes back (the coordinator topics want two in sync),
  // then the transaction coordinator dies, if it is another broker.
  for (int32_t node = 1; node <= 3; ++node) {
    if (!cluster_->broker(node).running()) {
      ASSERT_TRUE(cluster_->Restart(node, Broker::RestartMode::kCrash).ok());
    }
  }
  ASSERT_TRUE(
      cluster_->KillCoordinator(CoordinatorKey::kTransaction, txn_id).ok());
  commit_one(kTransactions);
  if (HasFatalFailure()) return;
  std::vector<ConsumedRecord> read = ConsumeAll(
      bootstrap_, "events", 1, "read_committed", kTransactions + 1, 5000);
  EXPECT_EQ(read.size(), static_cast<size_t>(kTransactions + 1));
}

TEST_F(CompactionClusterTest, AFollowerCopiesACompactedLeaderAndCanLead) {
  StartCluster();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(cluster_->CreateTopic(kTable, 1, 3, kCompacted).ok());
  absl::StatusOr<PartitionLeadership> placement =
      cluster_->DescribePartition(kTable, 0);
  ASSERT_TRUE(placement.ok());
  const int32_t leader = placement->leader;
  int32_t follower = -1;
  for (int32_t node : placement->replicas)
    if (node != leader) follower = node;
  ASSERT_GT(follower, 0);

  // The follower is down while the table is written and compacted.
  ASSERT_TRUE(cluster_->Kill(follower).ok());
  RdKafkaPtr producer = NewClient(
      RD_KAFKA_PRODUCER,
      {{"bootstrap.servers", bootstrap_}, {"enable.idempotence", "true"}});
  ASSERT_TRUE(producer);
  WriteRounds(producer.get(), 0, kRounds);
  const size_t written = kKeys * kRounds;
  ASSERT_TRUE(Eventually([&] {
    return RecordsIn(cluster_->broker(leader), kTable, 0) < written / 2;
  }));

  // Back, it copies the compacted log (batches start past its log end) and
  // rejoins the ISR.
  ASSERT_TRUE(cluster_->Restart(follower, Broker::RestartMode::kCrash).ok());
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<PartitionLeadership> p =
        cluster_->DescribePartition(kTable, 0);
    return p.ok() && std::count(p->isr.begin(), p->isr.end(), follower) == 1;
  }));
  absl::StatusOr<PartitionOffsets> copied =
      cluster_->broker(follower).Offsets(kTable, 0);
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ(copied->log_end_offset, static_cast<int64_t>(written));

  // It leads once the others are gone, and serves every key's last value.
  for (int32_t node = 1; node <= 3; ++node) {
    if (node != follower) {
      ASSERT_TRUE(cluster_->Kill(node).ok());
    }
  }
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<PartitionLeadership> p =
        cluster_->DescribePartition(kTable, 0);
    return p.ok() && p->leader == follower;
  }));
  std::vector<ConsumedRecord> read =
      ConsumeAll(cluster_->broker(follower).bootstrap_servers(), kTable, 1,
                 "read_uncommitted", written, 3000);
  EXPECT_LT(read.size(), written);
  ExpectLatestValues(read, kRounds - 1);
}

}  // namespace
}  // namespace exactly::broker
