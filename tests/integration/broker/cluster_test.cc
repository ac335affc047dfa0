// Several brokers in one process (exactly/broker/cluster.h): the controller
// places replicas as Kafka does and refuses what Kafka refuses; every broker
// answers Metadata with the whole cluster; a partition is served by its
// leader only; a stopped broker's leaderships move to the ISR; and a real
// client (librdkafka) produces across the brokers and reads everything back.
#include "exactly/broker/cluster.h"

#include <librdkafka/rdkafka.h>

#include <map>
#include <set>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "support/kafka_client.h"
#include "support/raw_call.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::Call;
using ::exactly::testing::ConsumeAll;
using ::exactly::testing::DeliveryCounter;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using protocol::ErrorCode;

protocol::MetadataResponse Metadata(uint16_t port, const std::string& topic) {
  protocol::MetadataRequest request;
  request.topics.emplace();
  request.topics->push_back({});
  request.topics->back().name = topic;
  return Call<protocol::MetadataResponse>(port, 8, request);
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClusterOptions o{.brokers = 3};
    o.broker.verbose = getenv("CLUSTER_VERBOSE") != nullptr;
    auto cluster = Cluster::Start(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(ClusterTest, EveryBrokerDescribesTheWholeCluster) {
  ASSERT_TRUE(cluster_->CreateTopic("orders", 6, 3).ok());
  std::map<int32_t, int> leaders;
  for (int32_t id = 1; id <= 3; ++id) {
    protocol::MetadataResponse m =
        Metadata(cluster_->broker(id).port(), "orders");
    ASSERT_EQ(m.brokers.size(), 3u) << "asked broker " << id;
    std::set<int32_t> ports;
    for (const auto& b : m.brokers) {
      EXPECT_EQ(b.port, cluster_->broker(b.node_id).port());
      ports.insert(b.port);
    }
    EXPECT_EQ(ports.size(), 3u);
    ASSERT_EQ(m.topics.size(), 1u);
    ASSERT_EQ(m.topics[0].partitions.size(), 6u);
    for (const auto& p : m.topics[0].partitions) {
      EXPECT_EQ(p.error_code, 0);
      EXPECT_EQ(p.replica_nodes.size(), 3u);
      EXPECT_EQ(p.isr_nodes, p.replica_nodes);
      EXPECT_EQ(p.leader_id, p.replica_nodes.front());
      EXPECT_EQ(p.leader_epoch, 0);
      if (id == 1) ++leaders[p.leader_id];
    }
  }
  // Kafka's placement spreads the leaders evenly.
  EXPECT_EQ(leaders, (std::map<int32_t, int>{{1, 2}, {2, 2}, {3, 2}}));
}

TEST_F(ClusterTest, RefusesWhatKafkaRefuses) {
  absl::Status too_many = cluster_->CreateTopic("t", 1, 4);
  EXPECT_TRUE(absl::IsInvalidArgument(too_many)) << too_many;
  EXPECT_NE(too_many.message().find("INVALID_REPLICATION_FACTOR"),
            std::string::npos)
      << too_many;

  // Over the wire: an assignment naming a broker that does not exist, and a
  // replication factor above the broker count.
  protocol::CreateTopicsRequest request;
  request.timeout_ms = 5000;
  auto& unknown = request.topics.emplace_back();
  unknown.name = "unknown-broker";
  unknown.num_partitions = -1;
  unknown.replication_factor = -1;
  unknown.assignments.push_back({});
  unknown.assignments.back().partition_index = 0;
  unknown.assignments.back().broker_ids = {1, 9};
  auto& rf = request.topics.emplace_back();
  rf.name = "rf-four";
  rf.num_partitions = 1;
  rf.replication_factor = 4;
  auto& fine = request.topics.emplace_back();
  fine.name = "fine";
  fine.num_partitions = 2;
  fine.replication_factor = 2;
  auto response = Call<protocol::CreateTopicsResponse>(
      cluster_->broker(2).port(), 4, request);
  ASSERT_EQ(response.topics.size(), 3u);
  EXPECT_EQ(response.topics[0].error_code,
            static_cast<int16_t>(ErrorCode::kInvalidReplicaAssignment));
  EXPECT_EQ(response.topics[1].error_code,
            static_cast<int16_t>(ErrorCode::kInvalidReplicationFactor));
  EXPECT_EQ(response.topics[2].error_code, 0);
  auto fine_placement = cluster_->DescribePartition("fine", 1);
  ASSERT_TRUE(fine_placement.ok());
  EXPECT_EQ(fine_placement->replicas.size(), 2u);
}

TEST_F(ClusterTest, OnlyTheLeaderServesAPartition) {
  ASSERT_TRUE(cluster_->CreateTopic("t", 1, 3).ok());
  auto placement = cluster_->DescribePartition("t", 0);
  ASSERT_TRUE(placement.ok());
  const int32_t follower = placement->replicas[1];
  protocol::ListOffsetsRequest request;
  request.replica_id = -1;
  auto& t = request.topics.emplace_back();
  t.name = "t";
  auto& p = t.partitions.emplace_back();
  p.index = 0;
  p.timestamp = protocol::kListOffsetsLatest;
  auto at_follower = Call<protocol::ListOffsetsResponse>(
      cluster_->broker(follower).port(), 5, request);
  ASSERT_EQ(at_follower.topics.size(), 1u);
  EXPECT_EQ(at_follower.topics[0].partitions[0].error_code,
            static_cast<int16_t>(ErrorCode::kNotLeaderOrFollower));
  auto at_leader = Call<protocol::ListOffsetsResponse>(
      cluster_->broker(placement->leader).port(), 5, request);
  ASSERT_EQ(at_leader.topics.size(), 1u);
  EXPECT_EQ(at_leader.topics[0].partitions[0].error_code, 0);
}

TEST_F(ClusterTest, AStoppedBrokersLeadershipsMoveToTheIsr) {
  ASSERT_TRUE(cluster_->CreateTopic("t", 3, 3).ok());
  ASSERT_TRUE(cluster_->CreateTopic("single", 3, 1).ok());
  auto before = cluster_->DescribePartition("t", 0);
  ASSERT_TRUE(before.ok());
  const int32_t old_leader = before->leader;
  ASSERT_TRUE(cluster_->broker(old_leader).Stop().ok());
  auto after = cluster_->DescribePartition("t", 0);
  ASSERT_TRUE(after.ok());
  EXPECT_NE(after->leader, old_leader);
  EXPECT_EQ(after->leader, before->replicas[1]) << "the next in-sync replica";
  EXPECT_EQ(after->leader_epoch, before->leader_epoch + 1);
  EXPECT_EQ(after->isr.size(), 2u);
  // The survivors tell clients so, and no longer list the stopped broker;
  // a partition whose only replica it was is offline.
  const int32_t survivor = old_leader == 1 ? 2 : 1;
  protocol::MetadataResponse m =
      Metadata(cluster_->broker(survivor).port(), "single");
  EXPECT_EQ(m.brokers.size(), 2u);
  int offline = 0;
  for (const auto& p : m.topics.at(0).partitions) {
    if (p.leader_id == -1) {
      ++offline;
      EXPECT_EQ(p.error_code,
                static_cast<int16_t>(ErrorCode::kLeaderNotAvailable));
      EXPECT_EQ(p.offline_replicas, std::vector<int32_t>{old_leader});
    }
  }
  EXPECT_EQ(offline, 1) << "one partition of three lived on the stopped broker";
}

TEST_F(ClusterTest, ARealClientProducesAcrossTheBrokersAndReadsItAllBack) {
  // One replica per partition, spread over the three brokers.
  ASSERT_TRUE(cluster_->CreateTopic("spread", 6, 1).ok());
  std::set<int32_t> leaders;
  for (int32_t p = 0; p < 6; ++p)
    leaders.insert(cluster_->DescribePartition("spread", p)->leader);
  ASSERT_EQ(leaders.size(), 3u);
  DeliveryCounter counter;
  auto producer =
      NewClient(RD_KAFKA_PRODUCER,
                {{"bootstrap.servers", cluster_->bootstrap_servers()},
                 {"enable.idempotence", "true"},
                 {"linger.ms", "5"}},
                &DeliveryCounter::OnDelivery, &counter);
  ASSERT_TRUE(producer);
  constexpr int kRecords = 600;
  for (int i = 0; i < kRecords; ++i)
    ASSERT_EQ(ProduceOne(producer.get(), "spread", i % 6,
                         "k" + std::to_string(i), "v" + std::to_string(i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(producer.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(counter.delivered.load(), kRecords);
  EXPECT_EQ(counter.failed.load(), 0);
  auto records = ConsumeAll(cluster_->bootstrap_servers(), "spread", 6,
                            "read_committed", kRecords);
  ASSERT_EQ(records.size(), static_cast<size_t>(kRecords));
  std::set<std::string> values;
  for (const auto& r : records) values.insert(r.value);
  EXPECT_EQ(values.size(), static_cast<size_t>(kRecords)) << "no duplicates";
  // Each partition's records are on its leader, and only there.
  for (int32_t p = 0; p < 6; ++p) {
    const int32_t leader = cluster_->DescribePartition("spread", p)->leader;
    for (int32_t id = 1; id <= 3; ++id) {
      auto offsets = cluster_->broker(id).Offsets("spread", p);
      ASSERT_TRUE(offsets.ok()) << offsets.status();
      EXPECT_EQ(offsets->log_end_offset, id == leader ? kRecords / 6 : 0)
          << "partition " << p << " on broker " << id;
    }
  }
}

// Waits (bounded) until `done` holds.
template <class Pred>
bool Eventually(Pred done, int seconds = 10) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < give_up) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// Produces `count` records "<prefix>-<i>" and waits for every delivery
// report: with an idempotent producer (acks=all), or with `acks1` a plain
// acks=1 one (an idempotent producer needs acks=all).
void ProduceAll(const std::string& servers, const std::string& topic,
                int32_t partition, const std::string& prefix, int count,
                DeliveryCounter* counter, bool acks1 = false) {
  auto producer = NewClient(
      RD_KAFKA_PRODUCER,
      {{"bootstrap.servers", servers},
       acks1
           ? std::pair<std::string, std::string>{"acks", "1"}
           : std::pair<std::string, std::string>{"enable.idempotence", "true"},
       {"linger.ms", "2"}},
      &DeliveryCounter::OnDelivery, counter);
  ASSERT_TRUE(producer);
  for (int i = 0; i < count; ++i)
    ASSERT_EQ(ProduceOne(producer.get(), topic, partition, "k",
                         prefix + "-" + std::to_string(i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(producer.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

// The values of every record of `topic`[`partition`] as broker `id` holds it.
std::vector<std::string> ValuesOn(Broker& broker, const std::string& topic,
                                  int32_t partition) {
  std::vector<std::string> values;
  auto log = broker.ReadLog(topic, partition);
  EXPECT_TRUE(log.ok()) << log.status();
  if (!log.ok()) return values;
  for (const LoggedBatch& b : *log)
    if (!b.control)
      for (const LoggedRecord& r : b.records)
        values.push_back(r.value.value_or(""));
  return values;
}

TEST_F(ClusterTest, FollowersCopyTheLeadersLogAndTheHighWatermark) {
  ASSERT_TRUE(cluster_->CreateTopic("replicated", 1, 3).ok());
  DeliveryCounter counter;
  ProduceAll(cluster_->bootstrap_servers(), "replicated", 0, "r", 300,
             &counter);
  ASSERT_EQ(counter.delivered.load(), 300);
  const int32_t leader = cluster_->DescribePartition("replicated", 0)->leader;
  const std::vector<std::string> on_leader =
      ValuesOn(cluster_->broker(leader), "replicated", 0);
  ASSERT_EQ(on_leader.size(), 300u);
  for (int32_t id = 1; id <= 3; ++id) {
    // acks=all answered only once every in-sync replica held the records,
    // so they are there already; the high watermark reaches a follower with
    // its next fetch.
    EXPECT_EQ(ValuesOn(cluster_->broker(id), "replicated", 0), on_leader)
        << "broker " << id;
    EXPECT_TRUE(Eventually([&] {
      auto o = cluster_->broker(id).Offsets("replicated", 0);
      return o.ok() && o->high_watermark == o->log_end_offset &&
             o->log_end_offset == static_cast<int64_t>(on_leader.size());
    })) << "broker "
        << id;
  }
}

TEST_F(ClusterTest, AcksAllSurvivesTheLeadersDeathAndTheClientFollows) {
  ASSERT_TRUE(cluster_->CreateTopic("failover", 1, 3).ok());
  DeliveryCounter counter;
  ProduceAll(cluster_->bootstrap_servers(), "failover", 0, "before", 200,
             &counter);
  ASSERT_EQ(counter.delivered.load(), 200);
  const int32_t old_leader = cluster_->DescribePartition("failover", 0)->leader;
  ASSERT_TRUE(cluster_->broker(old_leader).Stop().ok());
  const int32_t new_leader = cluster_->DescribePartition("failover", 0)->leader;
  ASSERT_NE(new_leader, old_leader);
  ASSERT_NE(new_leader, -1);
  // Every acknowledged record is on the new leader.
  EXPECT_EQ(ValuesOn(cluster_->broker(new_leader), "failover", 0).size(), 200u);
  std::string survivors;
  for (int32_t id = 1; id <= 3; ++id) {
    if (id == old_leader) continue;
    if (!survivors.empty()) survivors += ",";
    survivors += cluster_->broker(id).bootstrap_servers();
  }
  ProduceAll(survivors, "failover", 0, "after", 200, &counter);
  EXPECT_EQ(counter.delivered.load(), 400);
  EXPECT_EQ(counter.failed.load(), 0);
  auto records = ConsumeAll(survivors, "failover", 1, "read_committed", 400);
  ASSERT_EQ(records.size(), 400u);
  std::set<std::string> values;
  for (const auto& r : records) values.insert(r.value);
  EXPECT_EQ(values.size(), 400u) << "nothing duplicated";
}

TEST_F(ClusterTest, MinInsyncReplicasRefusesAcksAllWhenTheIsrIsTooSmall) {
  ASSERT_TRUE(
      cluster_->CreateTopic("strict", 1, 3, {{"min.insync.replicas", "3"}})
          .ok());
  auto placement = cluster_->DescribePartition("strict", 0);
  ASSERT_TRUE(placement.ok());
  const int32_t follower = placement->replicas[2];
  ASSERT_TRUE(cluster_->broker(follower).Stop().ok());
  ASSERT_EQ(cluster_->DescribePartition("strict", 0)->isr.size(), 2u);
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = 1700000000000;
  std::string batch = *protocol::BuildRecordBatch(spec, {{"k", "v", {}, 0}});
  auto produce = [&](int16_t acks) {
    protocol::ProduceRequest request;
    request.acks = acks;
    request.timeout_ms = 5000;
    auto& t = request.topics.emplace_back();
    t.name = "strict";
    auto& p = t.partitions.emplace_back();
    p.index = 0;
    p.records.slices = {batch};
    auto response = Call<protocol::ProduceResponse>(
        cluster_->broker(placement->leader).port(), 7, request);
    return response.topics.empty()
               ? int16_t{-1}
               : response.topics[0].partitions[0].error_code;
  };
  EXPECT_EQ(produce(-1), static_cast<int16_t>(ErrorCode::kNotEnoughReplicas));
  EXPECT_EQ(produce(1), 0) << "acks=1 does not ask for replicas";
  // The follower returns, catches up and rejoins the ISR: acks=all works
  // again.
  ASSERT_TRUE(
      cluster_->broker(follower).Restart(Broker::RestartMode::kClean).ok());
  ASSERT_TRUE(Eventually([&] {
    return cluster_->DescribePartition("strict", 0)->isr.size() == 3;
  })) << "the ISR never grew back";
  EXPECT_EQ(produce(-1), 0);
  EXPECT_EQ(ValuesOn(cluster_->broker(follower), "strict", 0).size(), 2u);
}

// DeleteRecords moves the leader's log start; its followers learn it from
// their fetches and drop the same records, so a follower that leads next
// serves the same log start (Kafka's followers do the same).
TEST_F(ClusterTest, FollowersMoveTheirLogStartWithTheLeaders) {
  ASSERT_TRUE(cluster_->CreateTopic("trimmed", 1, 3).ok());
  DeliveryCounter counter;
  ProduceAll(cluster_->bootstrap_servers(), "trimmed", 0, "t", 100, &counter);
  ASSERT_EQ(counter.delivered.load(), 100);
  const int32_t leader = cluster_->DescribePartition("trimmed", 0)->leader;
  protocol::DeleteRecordsRequest request;
  request.timeout_ms = 5000;
  auto& t = request.topics.emplace_back();
  t.name = "trimmed";
  t.partitions.push_back({.index = 0, .offset = 60});
  auto response = Call<protocol::DeleteRecordsResponse>(
      cluster_->broker(leader).port(), 1, request);
  ASSERT_EQ(response.topics.size(), 1u);
  EXPECT_EQ(response.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(response.topics[0].partitions[0].low_watermark, 60);
  for (int32_t id = 1; id <= 3; ++id) {
    EXPECT_TRUE(Eventually([&] {
      auto offsets = cluster_->broker(id).Offsets("trimmed", 0);
      return offsets.ok() && offsets->log_start_offset == 60;
    })) << "broker "
        << id << " log start "
        << cluster_->broker(id).Offsets("trimmed", 0)->log_start_offset;
  }
  // The leader dies; the next one starts its log where the old one did.
  ASSERT_TRUE(cluster_->Kill(leader).ok());
  const int32_t next = cluster_->DescribePartition("trimmed", 0)->leader;
  ASSERT_NE(next, leader);
  std::vector<testing::ConsumedRecord> records = ConsumeAll(
      cluster_->bootstrap_servers(), "trimmed", 1, "read_committed", 40);
  ASSERT_EQ(records.size(), 40u);
  EXPECT_EQ(records.front().offset, 60);
  EXPECT_EQ(records.front().value, "t-60");
}

// The admin APIs act on the whole cluster whichever broker is asked:
// CreatePartitions places replicas for the new partitions on every broker,
// IncrementalAlterConfigs reaches the leader that enforces the config, and
// DeleteTopics removes the topic from every broker.
TEST_F(ClusterTest, AdminChangesReachEveryBroker) {
  ASSERT_TRUE(cluster_->CreateTopic("admin", 1, 3).ok());
  const int32_t leader = cluster_->DescribePartition("admin", 0)->leader;
  const int32_t other = leader == 1 ? 2 : 1;

  protocol::CreatePartitionsRequest grow;
  grow.topics.emplace_back().name = "admin";
  grow.topics.back().count = 3;
  auto grown = Call<protocol::CreatePartitionsResponse>(
      cluster_->broker(other).port(), 1, grow);
  ASSERT_EQ(grown.results.size(), 1u);
  EXPECT_EQ(grown.results[0].error_code, 0);
  for (int32_t id = 1; id <= 3; ++id) {
    protocol::MetadataResponse m =
        Metadata(cluster_->broker(id).port(), "admin");
    ASSERT_EQ(m.topics.size(), 1u);
    ASSERT_EQ(m.topics[0].partitions.size(), 3u) << "broker " << id;
    for (const auto& p : m.topics[0].partitions)
      EXPECT_EQ(p.replica_nodes.size(), 3u) << "broker " << id;
  }

  protocol::IncrementalAlterConfigsRequest alter;
  auto& resource = alter.resources.emplace_back();
  resource.resource_type = 2;
  resource.resource_name = "admin";
  resource.configs.push_back({.name = "min.insync.replicas", .value = "3"});
  auto altered = Call<protocol::IncrementalAlterConfigsResponse>(
      cluster_->broker(other).port(), 0, alter);
  ASSERT_EQ(altered.results.size(), 1u);
  EXPECT_EQ(altered.results[0].error_code, 0);
  // The leader enforces it: with a follower gone, acks=all is refused.
  auto placement = cluster_->DescribePartition("admin", 0);
  int32_t follower = -1;
  for (int32_t r : placement->replicas)
    if (r != leader && r != other) follower = r;
  ASSERT_TRUE(cluster_->broker(follower).Stop().ok());
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = 1700000000000;
  std::string batch = *protocol::BuildRecordBatch(spec, {{"k", "v", {}, 0}});
  protocol::ProduceRequest produce;
  produce.acks = -1;
  produce.timeout_ms = 5000;
  auto& pt = produce.topics.emplace_back();
  pt.name = "admin";
  auto& pp = pt.partitions.emplace_back();
  pp.index = 0;
  pp.records.slices = {batch};
  auto produced = Call<protocol::ProduceResponse>(
      cluster_->broker(leader).port(), 7, produce);
  ASSERT_EQ(produced.topics.size(), 1u);
  EXPECT_EQ(produced.topics[0].partitions[0].error_code,
            static_cast<int16_t>(ErrorCode::kNotEnoughReplicas));

  protocol::DeleteTopicsRequest remove;
  remove.topic_names = {"admin"};
  auto removed = Call<protocol::DeleteTopicsResponse>(
      cluster_->broker(other).port(), 4, remove);
  ASSERT_EQ(removed.topics.size(), 1u);
  EXPECT_EQ(removed.topics[0].error_code, 0);
  for (int32_t id = 1; id <= 3; ++id) {
    if (id == follower) continue;
    EXPECT_FALSE(cluster_->broker(id).Offsets("admin", 0).ok())
        << "broker " << id << " still holds the topic";
  }
  EXPECT_FALSE(cluster_->DescribePartition("admin", 0).ok());
}

// KIP-101: a leader acknowledges records under acks=1 that no follower copied
// (replication into both is paused), dies, and comes back as a follower of the
// replica that took over and wrote on. It must drop what it alone had, so the
// logs agree record for record; without the truncation its log would keep the
// lost records under offsets the new leader gave to others.
TEST(ClusterTruncationTest, AReturningLeaderDropsWhatOnlyItHad) {
  exactly::testing::TempDir dir;
  ClusterOptions o{.brokers = 3};
  o.broker.data_dir = dir.path();
  o.broker.verbose = getenv("CLUSTER_VERBOSE") != nullptr;
  auto started = Cluster::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  Cluster& cluster = **started;
  ASSERT_TRUE(cluster.CreateTopic("diverge", 1, 3).ok());
  DeliveryCounter counter;
  ProduceAll(cluster.bootstrap_servers(), "diverge", 0, "shared", 100,
             &counter);
  ASSERT_EQ(counter.delivered.load(), 100);
  const int32_t old_leader = cluster.DescribePartition("diverge", 0)->leader;
  ASSERT_TRUE(Eventually([&] {
    for (int32_t id = 1; id <= 3; ++id)
      if (cluster.broker(id).Offsets("diverge", 0)->log_end_offset != 100)
        return false;
    return true;
  }));

  for (int32_t id = 1; id <= 3; ++id)
    if (id != old_leader) cluster.broker(id).faults().PauseReplication();
  ProduceAll(cluster.broker(old_leader).bootstrap_servers(), "diverge", 0,
             "only-on-the-old-leader", 50, &counter, /*acks1=*/true);
  ASSERT_EQ(counter.delivered.load(), 150) << "acks=1 answered by the leader";
  ASSERT_EQ(cluster.broker(old_leader).Offsets("diverge", 0)->log_end_offset,
            150);

  ASSERT_TRUE(cluster.broker(old_leader).Stop().ok());
  const int32_t new_leader = cluster.DescribePartition("diverge", 0)->leader;
  ASSERT_NE(new_leader, old_leader);
  ASSERT_NE(new_leader, -1);
  std::string survivors;
  for (int32_t id = 1; id <= 3; ++id) {
    if (id == old_leader) continue;
    cluster.broker(id).faults().ResumeReplication();
    if (!survivors.empty()) survivors += ",";
    survivors += cluster.broker(id).bootstrap_servers();
  }
  ProduceAll(survivors, "diverge", 0, "new-leader", 30, &counter);
  ASSERT_EQ(counter.delivered.load(), 180);

  ASSERT_TRUE(
      cluster.broker(old_leader).Restart(Broker::RestartMode::kClean).ok());
  const std::vector<std::string> on_new_leader =
      ValuesOn(cluster.broker(new_leader), "diverge", 0);
  ASSERT_EQ(on_new_leader.size(), 130u) << "the paused followers copied none";
  EXPECT_TRUE(Eventually([&] {
    return ValuesOn(cluster.broker(old_leader), "diverge", 0) == on_new_leader;
  })) << "the returning replica's log differs from its leader's";
  for (const std::string& v :
       ValuesOn(cluster.broker(old_leader), "diverge", 0))
    EXPECT_EQ(v.rfind("only-on-the-old-leader", 0), std::string::npos) << v;

  // The cut is durable: restarted again, it holds the same log.
  ASSERT_TRUE(
      cluster.broker(old_leader).Restart(Broker::RestartMode::kCrash).ok());
  EXPECT_TRUE(Eventually([&] {
    return ValuesOn(cluster.broker(old_leader), "diverge", 0) == on_new_leader;
  }));
}

}  // namespace
}  // namespace exactly::broker
