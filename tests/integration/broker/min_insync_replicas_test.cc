// min.insync.replicas as Kafka applies it: a broker default for topics that do
// not set one (BrokerOptions::min_insync_replicas, --min-insync-replicas),
// described as STATIC_BROKER_CONFIG; and a value above the replication factor
// is accepted at creation and capped at the replication factor, as Kafka 3.7+
// caps it (tests/kafka/test_min_insync_replicas.py runs the same check on
// Apache Kafka), so acks=all is answered while every replica is in sync and
// refused once one is not. Also as a dynamic broker config (KIP-226): the
// cluster-wide default reaches every broker of a cluster, and one broker's own
// value wins over it on that broker.
#include <chrono>
#include <string>
#include <thread>

#include "exactly/broker/broker.h"
#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "support/raw_call.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::Call;
using protocol::ErrorCode;

int16_t Produce(uint16_t port, const std::string& topic, int16_t acks) {
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = 1700000000000;
  std::string batch = *protocol::BuildRecordBatch(spec, {{"k", "v", {}, 0}});
  protocol::ProduceRequest request;
  request.acks = acks;
  request.timeout_ms = 5000;
  auto& t = request.topics.emplace_back();
  t.name = topic;
  auto& p = t.partitions.emplace_back();
  p.index = 0;
  p.records.slices = {batch};
  auto response = Call<protocol::ProduceResponse>(port, 7, request);
  return response.topics.empty() ? int16_t{-1}
                                 : response.topics[0].partitions[0].error_code;
}

// The topic's min.insync.replicas as DescribeConfigs reports it: value and
// source.
std::pair<std::string, int8_t> DescribeMinIsr(uint16_t port,
                                              const std::string& topic) {
  protocol::DescribeConfigsRequest request;
  auto& r = request.resources.emplace_back();
  r.resource_type = 2;  // TOPIC
  r.resource_name = topic;
  r.configuration_keys = std::vector<std::string>{"min.insync.replicas"};
  auto response = Call<protocol::DescribeConfigsResponse>(port, 2, request);
  if (response.results.empty() || response.results[0].configs.empty())
    return {"", -1};
  const auto& c = response.results[0].configs[0];
  return {c.value.value_or(""), c.config_source};
}

// IncrementalAlterConfigs SET of min.insync.replicas on BROKER resource
// `resource` ("": the cluster-wide default), sent to the broker at `port`.
int16_t SetBrokerMinIsr(uint16_t port, const std::string& resource,
                        const std::string& value) {
  protocol::IncrementalAlterConfigsRequest request;
  request.resources.push_back(
      {4,
       resource,
       {{"min.insync.replicas", protocol::kConfigOpSet, value, {}}},
       {}});
  auto response =
      Call<protocol::IncrementalAlterConfigsResponse>(port, 1, request);
  return response.results.empty() ? int16_t{-1}
                                  : response.results[0].error_code;
}

// Polls DescribeMinIsr until it reports `want` (the other brokers take a
// dynamic config up from the controller a moment after the answer).
std::pair<std::string, int8_t> AwaitMinIsr(
    uint16_t port, const std::string& topic,
    const std::pair<std::string, int8_t>& want) {
  std::pair<std::string, int8_t> seen;
  for (int i = 0; i < 200; ++i) {
    seen = DescribeMinIsr(port, topic);
    if (seen == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return seen;
}

constexpr int8_t kDynamicBrokerConfig = 2;
constexpr int8_t kDynamicDefaultBrokerConfig = 3;
constexpr int8_t kStaticBrokerConfig = 4;
constexpr int8_t kTopicConfig = 1;

TEST(MinInsyncReplicasTest, AboveTheReplicationFactorIsCappedAtIt) {
  auto broker = Broker::Start({});
  ASSERT_TRUE(broker.ok()) << broker.status();
  // Accepted at creation, as Kafka accepts it.
  ASSERT_TRUE(
      (*broker)->CreateTopic("t", 1, -1, {{"min.insync.replicas", "2"}}).ok());
  EXPECT_EQ(Produce((*broker)->port(), "t", -1), 0) << "capped at RF 1";
  EXPECT_EQ(Produce((*broker)->port(), "t", 1), 0);

  // RF 2 with min.insync.replicas 3: both replicas must be in sync.
  ClusterOptions o{.brokers = 2};
  auto cluster = Cluster::Start(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  ASSERT_TRUE(c.CreateTopic("t", 1, 2, {{"min.insync.replicas", "3"}}).ok());
  EXPECT_EQ(
      Produce(c.broker(c.DescribePartition("t", 0)->leader).port(), "t", -1),
      0);
  ASSERT_TRUE(c.Kill(2).ok());
  ASSERT_EQ(c.DescribePartition("t", 0)->leader, 1);
  EXPECT_EQ(Produce(c.broker(1).port(), "t", -1),
            static_cast<int16_t>(ErrorCode::kNotEnoughReplicas));
  EXPECT_EQ(Produce(c.broker(1).port(), "t", 1), 0);
}

TEST(MinInsyncReplicasTest, TheBrokerDefaultAppliesToTopicsWithoutOne) {
  ClusterOptions o{.brokers = 2};
  o.broker.min_insync_replicas = 2;
  auto cluster = Cluster::Start(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  ASSERT_TRUE(c.CreateTopic("defaulted", 1, 2).ok());
  ASSERT_TRUE(
      c.CreateTopic("relaxed", 1, 2, {{"min.insync.replicas", "1"}}).ok());
  const uint16_t port = c.broker(1).port();
  EXPECT_EQ(DescribeMinIsr(port, "defaulted"),
            (std::pair<std::string, int8_t>{"2", kStaticBrokerConfig}));
  EXPECT_EQ(DescribeMinIsr(port, "relaxed"),
            (std::pair<std::string, int8_t>{"1", kTopicConfig}));
  EXPECT_EQ(
      Produce(c.broker(c.DescribePartition("defaulted", 0)->leader).port(),
              "defaulted", -1),
      0)
      << "both replicas in sync";

  // Broker 2 dies: broker 1 leads both topics with itself alone in sync,
  // fewer than the default asks.
  ASSERT_TRUE(c.Kill(2).ok());
  for (const char* topic : {"defaulted", "relaxed"}) {
    ASSERT_EQ(c.DescribePartition(topic, 0)->leader, 1) << topic;
    ASSERT_EQ(c.DescribePartition(topic, 0)->isr.size(), 1u) << topic;
  }
  EXPECT_EQ(Produce(port, "defaulted", -1),
            static_cast<int16_t>(ErrorCode::kNotEnoughReplicas));
  EXPECT_EQ(Produce(port, "defaulted", 1), 0);
  EXPECT_EQ(Produce(port, "relaxed", -1), 0) << "its own setting wins";
}

TEST(MinInsyncReplicasTest, DynamicBrokerConfigReachesEveryBroker) {
  auto cluster = Cluster::Start({.brokers = 3});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  ASSERT_TRUE(c.CreateTopic("t", 1, 3).ok());
  const int32_t leader = c.DescribePartition("t", 0)->leader;
  const int32_t follower = leader % 3 + 1;
  const int32_t third = follower % 3 + 1;
  const uint16_t leader_port = c.broker(leader).port();

  // The cluster-wide default, sent to a broker that does not lead: the
  // leader takes it up and every broker describes it.
  ASSERT_EQ(SetBrokerMinIsr(c.broker(follower).port(), "", "3"), 0);
  for (int32_t node : {1, 2, 3}) {
    EXPECT_EQ(
        AwaitMinIsr(c.broker(node).port(), "t",
                    {"3", kDynamicDefaultBrokerConfig}),
        (std::pair<std::string, int8_t>{"3", kDynamicDefaultBrokerConfig}))
        << "broker " << node;
  }
  EXPECT_EQ(Produce(leader_port, "t", -1), 0) << "all three in sync";
  ASSERT_TRUE(c.Kill(third).ok());
  ASSERT_EQ(c.DescribePartition("t", 0)->leader, leader);
  EXPECT_EQ(Produce(leader_port, "t", -1),
            static_cast<int16_t>(ErrorCode::kNotEnoughReplicas));

  // The leader's own value wins there; another broker's id is refused.
  EXPECT_EQ(SetBrokerMinIsr(leader_port, std::to_string(follower), "2"),
            static_cast<int16_t>(ErrorCode::kInvalidRequest));
  ASSERT_EQ(SetBrokerMinIsr(leader_port, std::to_string(leader), "2"), 0);
  EXPECT_EQ(DescribeMinIsr(leader_port, "t"),
            (std::pair<std::string, int8_t>{"2", kDynamicBrokerConfig}));
  EXPECT_EQ(Produce(leader_port, "t", -1), 0) << "two in sync is enough now";
  EXPECT_EQ(AwaitMinIsr(c.broker(follower).port(), "t",
                        {"3", kDynamicDefaultBrokerConfig}),
            (std::pair<std::string, int8_t>{"3", kDynamicDefaultBrokerConfig}))
      << "not on the other brokers";
}

}  // namespace
}  // namespace exactly::broker
