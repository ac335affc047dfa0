// The group coordinator fails over with its broker (issue 20): a group's
// committed offsets, membership and pending transactional offsets are records
// of its __consumer_offsets partition, replicated like any partition, and the
// partition's new leader takes the group up. Each test kills the group's
// coordinator and keeps its broker down while the group goes on: before
// failover, such a group had no coordinator until that broker returned.
// librdkafka drives it, as users' clients do.
#include <librdkafka/rdkafka.h>

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

using ::exactly::testing::AwaitLiveCoordinator;
using ::exactly::testing::ConsumeAll;
using ::exactly::testing::ConsumedRecord;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;
using ::exactly::testing::Succeeded;

constexpr int32_t kPartitions = 3;
constexpr char kTopic[] = "events";

class GroupCoordinatorFailoverTest
    : public ::exactly::testing::ThreeBrokerClusterTest {
 protected:
  void SetUp() override {
    ThreeBrokerClusterTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(cluster_
                    ->CreateTopic(kTopic, kPartitions, 3,
                                  {{"min.insync.replicas", "2"}})
                    .ok());
  }

  // Produces `count` records per partition, acks=all, each value unique.
  void ProduceBatch(const std::string& tag, int count) {
    RdKafkaPtr producer = NewClient(
        RD_KAFKA_PRODUCER,
        {{"bootstrap.servers", bootstrap_}, {"enable.idempotence", "true"}});
    ASSERT_TRUE(producer);
    for (int32_t p = 0; p < kPartitions; ++p)
      for (int i = 0; i < count; ++i)
        ASSERT_EQ(ProduceOne(producer.get(), kTopic, p, "k",
                             absl::StrCat(tag, "-p", p, "-", i)),
                  RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(rd_kafka_flush(producer.get(), 60000),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  RdKafkaPtr GroupConsumer(const std::string& group) {
    RdKafkaPtr c =
        NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap_},
                                      {"group.id", group},
                                      {"enable.auto.commit", "false"},
                                      {"auto.offset.reset", "earliest"},
                                      {"isolation.level", "read_committed"},
                                      {"session.timeout.ms", "6000"},
                                      {"heartbeat.interval.ms", "500"}});
    if (c) rd_kafka_poll_set_consumer(c.get());
    return c;
  }

  // Polls `c` until `count` records arrived (their values), or 60 s passed.
  static std::vector<std::string> Poll(rd_kafka_t* c, size_t count) {
    std::vector<std::string> values;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (values.size() < count &&
           std::chrono::steady_clock::now() < deadline) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 100);
      if (m == nullptr) continue;
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
        values.emplace_back(static_cast<const char*>(m->payload), m->len);
      rd_kafka_message_destroy(m);
    }
    return values;
  }

  // The offsets `group` has committed on the topic's partitions (-1001,
  // RD_KAFKA_OFFSET_INVALID, where none), as OffsetFetch answers them now.
  std::map<int32_t, int64_t> Committed(const std::string& group,
                                       rd_kafka_resp_err_t* error) {
    RdKafkaPtr c =
        NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap_},
                                      {"group.id", group},
                                      {"enable.auto.commit", "false"},
                                      {"isolation.level", "read_committed"}});
    std::map<int32_t, int64_t> out;
    if (!c) return out;
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(kPartitions);
    for (int32_t p = 0; p < kPartitions; ++p)
      rd_kafka_topic_partition_list_add(list, kTopic, p);
    *error = rd_kafka_committed(c.get(), list, 10000);
    for (int i = 0; i < list->cnt; ++i)
      out[list->elems[i].partition] = list->elems[i].offset;
    rd_kafka_topic_partition_list_destroy(list);
    return out;
  }
};

TEST_F(GroupCoordinatorFailoverTest, AGroupGoesOnWhileItsCoordinatorIsDown) {
  const std::string group = "failover-readers";
  ProduceBatch("first", 10);
  RdKafkaPtr consumer = GroupConsumer(group);
  ASSERT_TRUE(consumer);
  rd_kafka_topic_partition_list_t* topics =
      rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, kTopic, RD_KAFKA_PARTITION_UA);
  ASSERT_EQ(rd_kafka_subscribe(consumer.get(), topics),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(topics);
  std::vector<std::string> seen = Poll(consumer.get(), 3 * 10);
  ASSERT_EQ(seen.size(), 30u);
  ASSERT_EQ(rd_kafka_commit(consumer.get(), nullptr, /*async=*/0),
            RD_KAFKA_RESP_ERR_NO_ERROR);

  // The coordinator dies and stays down; the group's partition of
  // __consumer_offsets has a new leader, which takes the group up.
  const int32_t first =
      AwaitLiveCoordinator(*cluster_, protocol::kCoordinatorKeyGroup, group);
  ASSERT_GT(first, 0);
  absl::StatusOr<int32_t> killed =
      cluster_->KillCoordinator(CoordinatorKey::kGroup, group);
  ASSERT_TRUE(killed.ok()) << killed.status();
  ASSERT_EQ(*killed, first);
  const int32_t second =
      AwaitLiveCoordinator(*cluster_, protocol::kCoordinatorKeyGroup, group);
  ASSERT_GT(second, 0);
  EXPECT_NE(second, first);

  // The same member reads on and commits through the new coordinator.
  ProduceBatch("second", 10);
  std::vector<std::string> more = Poll(consumer.get(), 3 * 10);
  ASSERT_EQ(more.size(), 30u);
  for (const std::string& v : more) EXPECT_EQ(v.rfind("second-", 0), 0u) << v;
  ASSERT_EQ(rd_kafka_commit(consumer.get(), nullptr, /*async=*/0),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_consumer_close(consumer.get());
  consumer.reset();

  // What the new coordinator serves: both commits, the second on top.
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::map<int32_t, int64_t> committed = Committed(group, &error);
  ASSERT_EQ(error, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(error);
  for (int32_t p = 0; p < kPartitions; ++p)
    EXPECT_EQ(committed[p], 20) << "partition " << p;
  // A new member of the group starts there: nothing is read twice.
  ProduceBatch("third", 1);
  RdKafkaPtr next = GroupConsumer(group);
  ASSERT_TRUE(next);
  topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, kTopic, RD_KAFKA_PARTITION_UA);
  ASSERT_EQ(rd_kafka_subscribe(next.get(), topics), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(topics);
  std::vector<std::string> rest = Poll(next.get(), 3);
  ASSERT_EQ(rest.size(), 3u);
  for (const std::string& v : rest) EXPECT_EQ(v.rfind("third-", 0), 0u) << v;
  rd_kafka_consumer_close(next.get());
  ASSERT_TRUE(cluster_->Restart(first, Broker::RestartMode::kCrash).ok());
}

TEST_F(GroupCoordinatorFailoverTest,
       PendingTransactionalOffsetsAreCommittedByTheNextCoordinator) {
  const std::string group = "txn-offsets-group";
  const int32_t coordinator =
      AwaitLiveCoordinator(*cluster_, protocol::kCoordinatorKeyGroup, group);
  ASSERT_GT(coordinator, 0);
  // The group's coordinator holds every marker it is sent: the transaction's
  // offsets stay pending there.
  cluster_->broker(coordinator).faults().HoldMarkers();

  RdKafkaPtr producer =
      NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_},
                                    {"transactional.id", "txn-offsets-writer"},
                                    {"transaction.timeout.ms", "20000"},
                                    {"linger.ms", "1"}});
  ASSERT_TRUE(producer);
  std::string what;
  ASSERT_TRUE(
      Succeeded(rd_kafka_init_transactions(producer.get(), 60000), &what))
      << what;
  ASSERT_TRUE(Succeeded(rd_kafka_begin_transaction(producer.get())));
  ASSERT_EQ(ProduceOne(producer.get(), kTopic, 0, "k", "transformed"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_t* offsets =
      rd_kafka_topic_partition_list_new(kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p)
    rd_kafka_topic_partition_list_add(offsets, kTopic, p)->offset = 7 + p;
  RdKafkaPtr meta = GroupConsumer(group);
  rd_kafka_consumer_group_metadata_t* gm =
      rd_kafka_consumer_group_metadata(meta.get());
  ASSERT_TRUE(Succeeded(
      rd_kafka_send_offsets_to_transaction(producer.get(), offsets, gm, 60000),
      &what))
      << what;
  rd_kafka_consumer_group_metadata_destroy(gm);
  rd_kafka_topic_partition_list_destroy(offsets);
  ASSERT_TRUE(
      Succeeded(rd_kafka_commit_transaction(producer.get(), 60000), &what))
      << what;

  // The commit is decided; the group's coordinator dies before applying it.
  // The next one loads the transactional offsets as pending from the log and
  // applies them when the transaction coordinator's marker reaches it.
  ASSERT_TRUE(cluster_->Kill(coordinator).ok());
  const int32_t next =
      AwaitLiveCoordinator(*cluster_, protocol::kCoordinatorKeyGroup, group);
  ASSERT_GT(next, 0);
  EXPECT_NE(next, coordinator);
  std::map<int32_t, int64_t> committed;
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int i = 0; i < 60; ++i) {
    committed = Committed(group, &error);
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR && committed[0] == 7) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(error, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(error);
  for (int32_t p = 0; p < kPartitions; ++p)
    EXPECT_EQ(committed[p], 7 + p) << "partition " << p;
  std::vector<ConsumedRecord> read =
      ConsumeAll(bootstrap_, kTopic, kPartitions, "read_committed", 2,
                 /*idle_ms=*/3000);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].value, "transformed");
  meta.reset();
  ASSERT_TRUE(cluster_->Restart(coordinator, Broker::RestartMode::kCrash).ok());
}

TEST_F(GroupCoordinatorFailoverTest, AnAbortedTransactionsOffsetsStayAway) {
  const std::string group = "aborted-offsets-group";
  const int32_t coordinator =
      AwaitLiveCoordinator(*cluster_, protocol::kCoordinatorKeyGroup, group);
  ASSERT_GT(coordinator, 0);
  // A plain commit first, which the aborted transaction must not replace.
  {
    RdKafkaPtr c = GroupConsumer(group);
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, kTopic, 0)->offset = 3;
    ASSERT_EQ(rd_kafka_commit(c.get(), list, /*async=*/0),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(list);
    rd_kafka_consumer_close(c.get());
  }
  cluster_->broker(coordinator).faults().HoldMarkers();
  RdKafkaPtr producer =
      NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_},
                                    {"transactional.id", "aborting-writer"},
                                    {"linger.ms", "1"}});
  ASSERT_TRUE(producer);
  ASSERT_TRUE(Succeeded(rd_kafka_init_transactions(producer.get(), 60000)));
  ASSERT_TRUE(Succeeded(rd_kafka_begin_transaction(producer.get())));
  rd_kafka_topic_partition_list_t* offsets =
      rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(offsets, kTopic, 0)->offset = 99;
  RdKafkaPtr meta = GroupConsumer(group);
  rd_kafka_consumer_group_metadata_t* gm =
      rd_kafka_consumer_group_metadata(meta.get());
  std::string what;
  ASSERT_TRUE(Succeeded(
      rd_kafka_send_offsets_to_transaction(producer.get(), offsets, gm, 60000),
      &what))
      << what;
  rd_kafka_consumer_group_metadata_destroy(gm);
  rd_kafka_topic_partition_list_destroy(offsets);
  ASSERT_TRUE(Succeeded(rd_kafka_abort_transaction(producer.get(), 60000)));

  ASSERT_TRUE(cluster_->Kill(coordinator).ok());
  ASSERT_GT(
      AwaitLiveCoordinator(*cluster_, protocol::kCoordinatorKeyGroup, group),
      0);
  // The abort marker reaches the new coordinator; until then the offset is
  // pending (UNSTABLE_OFFSET_COMMIT to a read_committed consumer, which
  // librdkafka retries). Either way 99 is never served.
  std::map<int32_t, int64_t> committed;
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int i = 0; i < 60; ++i) {
    committed = Committed(group, &error);
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(error, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(error);
  EXPECT_EQ(committed[0], 3);
  meta.reset();
  ASSERT_TRUE(cluster_->Restart(coordinator, Broker::RestartMode::kCrash).ok());
}

}  // namespace
}  // namespace exactly::broker
