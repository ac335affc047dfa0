// Consumer groups on the bundled broker, driven by librdkafka consumers as an
// application would: partitions split between members, handed over when one
// leaves or dies, consumption resumed from committed offsets (also across a
// broker restart), static membership. Assertions are on records: which
// consumer got which, each exactly once, resuming exactly where the commit
// says.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactly/broker/broker.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/group_helpers.h"
#include "support/kafka_client.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::ConsumedRecord;
using ::exactly::testing::DeliveryCounter;
using ::exactly::testing::GroupConsumer;
using ::exactly::testing::NewClient;
using ::exactly::testing::PollUntil;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;
using ::exactly::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string ValueFor(int32_t partition, int64_t offset) {
  return absl::StrCat("p", partition, "-", offset);
}

BrokerOptions GroupBrokerOptions() {
  BrokerOptions options;
  // Short sessions keep eviction tests quick; the consumers use 6 s.
  options.group_min_session_timeout_ms = 1000;
  options.group_initial_rebalance_delay_ms = 0;
  return options;
}

// Appends records ValueFor(p, offset) for offsets [from, to) of each
// partition, and waits until all are acknowledged.
void Produce(const std::string& bootstrap, const std::string& topic,
             int32_t partitions, int64_t from, int64_t to) {
  DeliveryCounter counter;
  RdKafkaPtr producer = NewClient(RD_KAFKA_PRODUCER,
                                  {{"bootstrap.servers", bootstrap},
                                   {"enable.idempotence", "true"},
                                   {"linger.ms", "1"}},
                                  &DeliveryCounter::OnDelivery, &counter);
  ASSERT_TRUE(producer);
  for (int64_t o = from; o < to; ++o) {
    for (int32_t p = 0; p < partitions; ++p) {
      ASSERT_EQ(
          ProduceOne(producer.get(), topic, p, absl::StrCat(o), ValueFor(p, o)),
          RD_KAFKA_RESP_ERR_NO_ERROR);
    }
  }
  ASSERT_EQ(rd_kafka_flush(producer.get(), 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(counter.failed.load(), 0);
  ASSERT_EQ(counter.delivered.load(), (to - from) * partitions);
}

// What one consumer read, per partition, in order.
using Reads = std::map<int32_t, std::vector<ConsumedRecord>>;

// Asserts that `reads` of `partition` are exactly offsets [from, to), in
// order, with the values the producer wrote.
void ExpectExactly(const Reads& reads, int32_t partition, int64_t from,
                   int64_t to) {
  auto it = reads.find(partition);
  std::vector<ConsumedRecord> got =
      it == reads.end() ? std::vector<ConsumedRecord>() : it->second;
  ASSERT_EQ(static_cast<int64_t>(got.size()), to - from)
      << "partition " << partition << ": expected offsets [" << from << ", "
      << to << ")";
  for (int64_t i = 0; i < to - from; ++i) {
    EXPECT_EQ(got[i].offset, from + i) << "partition " << partition;
    EXPECT_EQ(got[i].value, ValueFor(partition, from + i));
  }
}

size_t Count(const Reads& reads) {
  size_t n = 0;
  for (const auto& [p, records] : reads) n += records.size();
  return n;
}

std::set<int32_t> Union(const std::set<int32_t>& a,
                        const std::set<int32_t>& b) {
  std::set<int32_t> u = a;
  u.insert(b.begin(), b.end());
  return u;
}

class ConsumerGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Broker>> broker =
        Broker::Start(GroupBrokerOptions());
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = std::move(*broker);
  }

  // Waits until `a` and `b` each own two of the four partitions.
  void WaitForSplit(GroupConsumer& a, GroupConsumer& b) {
    ASSERT_TRUE(PollUntil(
        {&a, &b},
        [&] {
          return a.assignment().size() == 2 && b.assignment().size() == 2 &&
                 Union(a.assignment(), b.assignment()).size() == 4;
        }))
        << "assignments: " << a.assignment().size() << " + "
        << b.assignment().size();
  }

  std::optional<int64_t> Committed(const std::string& group,
                                   const std::string& topic, int32_t p) {
    absl::StatusOr<std::optional<int64_t>> c =
        broker_->CommittedOffset(group, topic, p);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : std::nullopt;
  }

  std::unique_ptr<Broker> broker_;
};

TEST_F(ConsumerGroupTest, SplitThenSurvivorResumesEachPartitionFromItsCommit) {
  const std::string topic = "orders";
  ASSERT_TRUE(broker_->CreateTopic(topic, 4).ok());
  const std::string bootstrap = broker_->bootstrap_servers();
  GroupConsumer a(bootstrap, "split-group");
  GroupConsumer b(bootstrap, "split-group");
  a.Subscribe(topic);
  b.Subscribe(topic);
  WaitForSplit(a, b);
  const std::set<int32_t> a_parts = a.assignment();
  const std::set<int32_t> b_parts = b.assignment();

  Produce(bootstrap, topic, 4, 0, 50);
  // B processes and commits every record. A processes (and commits) only the
  // first 30 of each partition: the records after that it reads and drops,
  // as if it stopped before processing them. They must be read again, by B.
  Reads a_reads, b_reads;
  ASSERT_TRUE(PollUntil(
      {&a, &b}, [&] { return Count(a_reads) == 100 && Count(b_reads) == 100; },
      [&](GroupConsumer& c, const ConsumedRecord& r) {
        if (&c == &a) {
          a_reads[r.partition].push_back(r);
          if (r.offset < 30) {
            EXPECT_EQ(a.Commit(topic, r.partition, r.offset + 1,
                               absl::StrCat("a@", r.offset + 1)),
                      RD_KAFKA_RESP_ERR_NO_ERROR);
          }
        } else {
          b_reads[r.partition].push_back(r);
          EXPECT_EQ(b.Commit(topic, r.partition, r.offset + 1),
                    RD_KAFKA_RESP_ERR_NO_ERROR);
        }
      }))
      << "A read " << Count(a_reads) << ", B read " << Count(b_reads);
  for (int32_t p : a_parts) ExpectExactly(a_reads, p, 0, 50);
  for (int32_t p : b_parts) ExpectExactly(b_reads, p, 0, 50);
  for (int32_t p : a_parts) EXPECT_EQ(Committed("split-group", topic, p), 30);
  for (int32_t p : b_parts) EXPECT_EQ(Committed("split-group", topic, p), 50);
  EXPECT_EQ(a.assignment(), a_parts) << "no rebalance while both live";
  EXPECT_EQ(b.assignment(), b_parts);

  // A leaves; B takes all four partitions.
  a.Close();
  ASSERT_TRUE(PollUntil({&b}, [&] { return b.assignment().size() == 4; }));
  Produce(bootstrap, topic, 4, 50, 75);
  Reads after;
  ASSERT_TRUE(PollUntil(
      {&b}, [&] { return Count(after) == 2 * 45 + 2 * 25; },
      [&](GroupConsumer&, const ConsumedRecord& r) {
        after[r.partition].push_back(r);
        EXPECT_EQ(b.Commit(topic, r.partition, r.offset + 1),
                  RD_KAFKA_RESP_ERR_NO_ERROR);
      }))
      << "B read " << Count(after) << " after the rebalance";
  // Nothing more arrives: a duplicate would show up here.
  PollUntil(
      {&b}, [] { return false; },
      [&](GroupConsumer&, const ConsumedRecord& r) {
        after[r.partition].push_back(r);
      },
      std::chrono::seconds(1));
  // A's partitions resume at A's commit (30): its unprocessed records are
  // read again, nothing it committed is. B's own resume at 50.
  for (int32_t p : a_parts) ExpectExactly(after, p, 30, 75);
  for (int32_t p : b_parts) ExpectExactly(after, p, 50, 75);
  for (int32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(Committed("split-group", topic, p), 75);
  }
}

TEST_F(ConsumerGroupTest, MemberKilledWithoutLeavingIsEvictedAfterSession) {
  const std::string topic = "events";
  ASSERT_TRUE(broker_->CreateTopic(topic, 4).ok());
  const std::string bootstrap = broker_->bootstrap_servers();
  auto a = std::make_unique<GroupConsumer>(bootstrap, "evict-group");
  GroupConsumer b(bootstrap, "evict-group");
  a->Subscribe(topic);
  b.Subscribe(topic);
  WaitForSplit(*a, b);
  const std::set<int32_t> a_parts = a->assignment();
  const std::set<int32_t> b_parts = b.assignment();

  Produce(bootstrap, topic, 4, 0, 20);
  Reads before;
  ASSERT_TRUE(PollUntil(
      {a.get(), &b}, [&] { return Count(before) == 80; },
      [&](GroupConsumer& c, const ConsumedRecord& r) {
        before[r.partition].push_back(r);
        EXPECT_EQ(c.Commit(topic, r.partition, r.offset + 1),
                  RD_KAFKA_RESP_ERR_NO_ERROR);
      }));
  for (int32_t p = 0; p < 4; ++p) ExpectExactly(before, p, 0, 20);

  // A dies: no LeaveGroup, no more heartbeats. Only its session timeout
  // tells the coordinator.
  a->Kill();
  ASSERT_TRUE(PollUntil({&b}, [&] { return b.assignment().size() == 4; }))
      << "B never got A's partitions";
  // The group now has B alone (ListGroups + DescribeGroups).
  const struct rd_kafka_group_list* groups = nullptr;
  ASSERT_EQ(rd_kafka_list_groups(b.handle(), "evict-group", &groups, 10000),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(groups->group_cnt, 1);
  EXPECT_STREQ(groups->groups[0].state, "Stable");
  EXPECT_STREQ(groups->groups[0].protocol_type, "consumer");
  EXPECT_EQ(groups->groups[0].member_cnt, 1);
  rd_kafka_group_list_destroy(groups);

  Produce(bootstrap, topic, 4, 20, 30);
  Reads after;
  ASSERT_TRUE(PollUntil(
      {&b}, [&] { return Count(after) == 40; },
      [&](GroupConsumer&, const ConsumedRecord& r) {
        after[r.partition].push_back(r);
      }));
  PollUntil(
      {&b}, [] { return false; },
      [&](GroupConsumer&, const ConsumedRecord& r) {
        after[r.partition].push_back(r);
      },
      std::chrono::seconds(1));
  // A's partitions resume from what A committed before dying.
  for (int32_t p = 0; p < 4; ++p) ExpectExactly(after, p, 20, 30);
  (void)a_parts;
  (void)b_parts;
}

TEST_F(ConsumerGroupTest, StaticMemberRestartGetsItsPartitionsBackSilently) {
  const std::string topic = "static-topic";
  ASSERT_TRUE(broker_->CreateTopic(topic, 4).ok());
  const std::string bootstrap = broker_->bootstrap_servers();
  auto a = std::make_unique<GroupConsumer>(
      bootstrap, "static-group",
      std::map<std::string, std::string>{{"group.instance.id", "instance-a"}});
  GroupConsumer b(bootstrap, "static-group",
                  {{"group.instance.id", "instance-b"}});
  a->Subscribe(topic);
  b.Subscribe(topic);
  WaitForSplit(*a, b);
  const std::set<int32_t> a_parts = a->assignment();
  const int b_assignments = b.assignments_received();

  // instance-a restarts: a static member does not leave the group when it
  // closes, and its successor takes its place without a rebalance.
  a->Close();
  a = std::make_unique<GroupConsumer>(
      bootstrap, "static-group",
      std::map<std::string, std::string>{{"group.instance.id", "instance-a"}});
  a->Subscribe(topic);
  ASSERT_TRUE(
      PollUntil({a.get(), &b}, [&] { return a->assignment() == a_parts; }))
      << "the restarted instance got " << a->assignment().size()
      << " partition(s)";
  // B heard nothing: same assignment, no new one handed out.
  PollUntil(
      {a.get(), &b}, [] { return false; }, nullptr, std::chrono::seconds(2));
  EXPECT_EQ(b.assignments_received(), b_assignments);
  EXPECT_EQ(b.assignment().size(), 2u);
  EXPECT_EQ(a->assignment(), a_parts);
}

TEST_F(ConsumerGroupTest, InjectedCoordinatorErrorsAreSurvived) {
  const std::string topic = "faulty";
  ASSERT_TRUE(broker_->CreateTopic(topic, 2).ok());
  const std::string bootstrap = broker_->bootstrap_servers();
  // The coordinator is not found twice, then the group rebalances once
  // without cause.
  broker_->faults().FailRequests({.api_key = 10},
                                 /*COORDINATOR_NOT_AVAILABLE*/ 15, 2);
  GroupConsumer c(bootstrap, "faulty-group");
  c.Subscribe(topic);
  ASSERT_TRUE(PollUntil({&c}, [&] { return c.assignment().size() == 2; }));
  const int assignments = c.assignments_received();
  Produce(bootstrap, topic, 2, 0, 10);
  broker_->faults().FailRequests({.api_key = 12}, /*REBALANCE_IN_PROGRESS*/ 27,
                                 1);
  Reads reads;
  ASSERT_TRUE(PollUntil(
      {&c},
      [&] {
        return Count(reads) == 20 && c.assignments_received() > assignments &&
               c.assignment().size() == 2;
      },
      [&](GroupConsumer&, const ConsumedRecord& r) {
        reads[r.partition].push_back(r);
        EXPECT_EQ(c.Commit(topic, r.partition, r.offset + 1),
                  RD_KAFKA_RESP_ERR_NO_ERROR);
      }));
  ExpectExactly(reads, 0, 0, 10);
  ExpectExactly(reads, 1, 0, 10);
}

TEST(ConsumerGroupRestartTest, CommittedOffsetsAndMetadataSurviveRestarts) {
  TempDir dir;
  BrokerOptions options = GroupBrokerOptions();
  options.data_dir = dir.path();
  absl::StatusOr<std::unique_ptr<Broker>> started = Broker::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  Broker& broker = **started;
  const std::string topic = "durable";
  ASSERT_TRUE(broker.CreateTopic(topic, 2).ok());
  Produce(broker.bootstrap_servers(), topic, 2, 0, 10);

  {
    GroupConsumer c(broker.bootstrap_servers(), "durable-group");
    c.Subscribe(topic);
    Reads reads;
    ASSERT_TRUE(PollUntil(
        {&c}, [&] { return Count(reads) == 20; },
        [&](GroupConsumer&, const ConsumedRecord& r) {
          reads[r.partition].push_back(r);
        }));
    ASSERT_EQ(c.Commit(topic, 0, 7, "checkpoint-0"),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(c.Commit(topic, 1, 10, "checkpoint-1"),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    c.Close();
  }

  ASSERT_TRUE(broker.Restart(Broker::RestartMode::kClean).ok());
  EXPECT_EQ(*broker.CommittedOffset("durable-group", topic, 0), 7);
  EXPECT_EQ(*broker.CommittedOffset("durable-group", topic, 1), 10);
  {
    GroupConsumer c(broker.bootstrap_servers(), "durable-group");
    auto c0 = c.Committed(topic, 0);
    auto c1 = c.Committed(topic, 1);
    ASSERT_TRUE(c0.has_value() && c1.has_value());
    EXPECT_EQ(c0->first, 7);
    EXPECT_EQ(c0->second, "checkpoint-0");
    EXPECT_EQ(c1->first, 10);
    EXPECT_EQ(c1->second, "checkpoint-1");
    c.Subscribe(topic);
    Reads reads;
    ASSERT_TRUE(PollUntil(
        {&c}, [&] { return Count(reads) == 3; },
        [&](GroupConsumer&, const ConsumedRecord& r) {
          reads[r.partition].push_back(r);
        }));
    PollUntil(
        {&c}, [] { return false; },
        [&](GroupConsumer&, const ConsumedRecord& r) {
          reads[r.partition].push_back(r);
        },
        std::chrono::seconds(1));
    // It resumes exactly at the commits: p0 from 7, nothing from p1.
    ExpectExactly(reads, 0, 7, 10);
    ExpectExactly(reads, 1, 10, 10);
    ASSERT_EQ(c.Commit(topic, 0, 10, "done"), RD_KAFKA_RESP_ERR_NO_ERROR);
    c.Close();
  }

  // An acknowledged commit survives a crash too.
  ASSERT_TRUE(broker.Restart(Broker::RestartMode::kCrash).ok());
  EXPECT_EQ(*broker.CommittedOffset("durable-group", topic, 0), 10);
  EXPECT_EQ(*broker.CommittedOffset("durable-group", topic, 1), 10);
  GroupConsumer c(broker.bootstrap_servers(), "durable-group");
  auto c0 = c.Committed(topic, 0);
  ASSERT_TRUE(c0.has_value());
  EXPECT_EQ(c0->second, "done");
}

}  // namespace
}  // namespace exactly::broker
