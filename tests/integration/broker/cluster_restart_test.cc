// A cluster restarted from its data dirs (the controller's state is durable:
// controller/controller_state_file.h): topics keep their replicas, every
// partition has a leader again, and every record acknowledged under acks=all
// before the restart is read back once, after a clean stop and after the
// whole process was SIGKILLed. Dynamic broker configs come back with them.
#include <librdkafka/rdkafka.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "support/broker_process.h"
#include "support/kafka_client.h"
#include "support/raw_call.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::ConsumeAll;
using ::exactly::testing::DeliveryCounter;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;

// Produces values first..first+count-1 round-robin over `partitions`, acks=all
// and idempotent; returns how many were acknowledged.
int64_t ProduceAcked(const std::string& bootstrap, const std::string& topic,
                     int32_t partitions, int first, int count) {
  DeliveryCounter counter;
  auto producer = NewClient(RD_KAFKA_PRODUCER,
                            {{"bootstrap.servers", bootstrap},
                             {"enable.idempotence", "true"},
                             {"acks", "all"},
                             {"linger.ms", "5"}},
                            &DeliveryCounter::OnDelivery, &counter);
  if (!producer) return 0;
  for (int i = first; i < first + count; ++i)
    EXPECT_EQ(ProduceOne(producer.get(), topic, i % partitions, "k",
                         std::to_string(i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(rd_kafka_flush(producer.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(counter.failed.load(), 0) << rd_kafka_err2str(
      static_cast<rd_kafka_resp_err_t>(counter.last_error.load()));
  return counter.delivered.load();
}

// Reads the topic and checks it holds exactly the values [0, count): none
// missing, none twice.
void ExpectExactly(const std::string& bootstrap, const std::string& topic,
                   int32_t partitions, int count) {
  std::vector<testing::ConsumedRecord> records =
      ConsumeAll(bootstrap, topic, partitions, "read_committed",
                 static_cast<size_t>(count) + 1, 1000);
  std::multiset<std::string> seen;
  for (const auto& r : records) seen.insert(r.value);
  EXPECT_EQ(records.size(), static_cast<size_t>(count));
  for (int i = 0; i < count; ++i)
    EXPECT_EQ(seen.count(std::to_string(i)), 1u) << "value " << i;
}

ClusterOptions Options(const std::string& data_dir) {
  ClusterOptions o{.brokers = 3};
  o.broker.data_dir = data_dir;
  o.broker.verbose = getenv("CLUSTER_VERBOSE") != nullptr;
  return o;
}

TEST(ClusterRestartTest, AStoppedClusterComesBackWithItsTopicsAndRecords) {
  testing::TempDir dir;
  std::vector<PartitionLeadership> before;
  {
    auto cluster = Cluster::Start(Options(dir.path()));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    ASSERT_TRUE(
        (*cluster)
            ->CreateTopic("orders", 3, 3, {{"min.insync.replicas", "2"}})
            .ok());
    EXPECT_EQ(
        ProduceAcked((*cluster)->bootstrap_servers(), "orders", 3, 0, 300),
        300);
    for (int32_t p = 0; p < 3; ++p) {
      auto d = (*cluster)->DescribePartition("orders", p);
      ASSERT_TRUE(d.ok());
      before.push_back(*d);
    }
    ASSERT_TRUE((*cluster)->Stop().ok());
  }
  auto cluster = Cluster::Start(Options(dir.path()));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  for (int32_t p = 0; p < 3; ++p) {
    auto d = (*cluster)->DescribePartition("orders", p);
    ASSERT_TRUE(d.ok()) << "the topic is known again: " << d.status();
    EXPECT_EQ(d->replicas, before[static_cast<size_t>(p)].replicas);
    EXPECT_NE(d->leader, -1) << "partition " << p << " has a leader";
    // The brokers stopped one by one, so leaderships moved on the way down:
    // epochs only grow.
    EXPECT_GE(d->leader_epoch, before[static_cast<size_t>(p)].leader_epoch);
  }
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  ExpectExactly(bootstrap, "orders", 3, 300);
  // It takes writes again, acks=all with min.insync.replicas=2 included.
  EXPECT_EQ(ProduceAcked(bootstrap, "orders", 3, 300, 100), 100);
  ExpectExactly(bootstrap, "orders", 3, 400);
}

// A topic config's value and source as broker `port` describes it.
std::pair<std::string, int8_t> DescribeTopicConfig(uint16_t port,
                                                   const std::string& topic,
                                                   const std::string& key) {
  protocol::DescribeConfigsRequest request;
  auto& r = request.resources.emplace_back();
  r.resource_type = 2;
  r.resource_name = topic;
  r.configuration_keys = std::vector<std::string>{key};
  auto response = ::exactly::testing::Call<protocol::DescribeConfigsResponse>(
      port, 2, request);
  if (response.results.empty() || response.results[0].configs.empty())
    return {"", -1};
  const auto& c = response.results[0].configs[0];
  return {c.value.value_or(""), c.config_source};
}

TEST(ClusterRestartTest, DynamicBrokerConfigsComeBack) {
  testing::TempDir dir;
  {
    auto cluster = Cluster::Start(Options(dir.path()));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    ASSERT_TRUE((*cluster)->CreateTopic("t", 1, 3).ok());
    protocol::IncrementalAlterConfigsRequest alter;
    alter.resources.push_back(
        {4,
         "",
         {{"log.retention.ms", protocol::kConfigOpSet, "3600000", {}}},
         {}});
    alter.resources.push_back(
        {4,
         "1",
         {{"log.retention.ms", protocol::kConfigOpSet, "7200000", {}}},
         {}});
    auto altered =
        ::exactly::testing::Call<protocol::IncrementalAlterConfigsResponse>(
            (*cluster)->broker(1).port(), 1, alter);
    ASSERT_EQ(altered.results.size(), 2u);
    EXPECT_EQ(altered.results[0].error_code, 0);
    EXPECT_EQ(altered.results[1].error_code, 0);
    ASSERT_TRUE((*cluster)->Stop().ok());
  }
  auto cluster = Cluster::Start(Options(dir.path()));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(
      DescribeTopicConfig((*cluster)->broker(1).port(), "t", "retention.ms"),
      (std::pair<std::string, int8_t>{"7200000", 2}))
      << "broker 1's own value";
  for (int32_t node : {2, 3}) {
    EXPECT_EQ(DescribeTopicConfig((*cluster)->broker(node).port(), "t",
                                  "retention.ms"),
              (std::pair<std::string, int8_t>{"3600000", 3}))
        << "the cluster-wide default on broker " << node;
  }
}

// The program users run, killed with SIGKILL after acks=all answers: nothing
// shut down cleanly, no broker was fenced. The same leaders come back.
TEST(ClusterRestartTest, TheBinaryKilledMidFlightLosesNoAcknowledgedRecord) {
  testing::TempDir dir;
  {
    testing::BrokerProcess process(EXACTLY_BROKER_BIN,
                                   {"--brokers", "3", "--data-dir", dir.path(),
                                    "--default-partitions", "3"});
    ASSERT_TRUE(process.running()) << process.error();
    EXPECT_EQ(ProduceAcked(process.bootstrap_servers(), "auto", 3, 0, 300),
              300);
    process.Kill();
  }
  testing::BrokerProcess process(EXACTLY_BROKER_BIN,
                                 {"--brokers", "3", "--data-dir", dir.path(),
                                  "--default-partitions", "3"});
  ASSERT_TRUE(process.running()) << process.error();
  const std::vector<std::string> servers =
      absl::StrSplit(process.bootstrap_servers(), ',');
  EXPECT_EQ(servers.size(), 3u);
  ExpectExactly(process.bootstrap_servers(), "auto", 3, 300);
  EXPECT_EQ(ProduceAcked(process.bootstrap_servers(), "auto", 3, 300, 60), 60);
  ExpectExactly(process.bootstrap_servers(), "auto", 3, 360);
  EXPECT_TRUE(process.Stop()) << "a clean exit on SIGTERM";
}

}  // namespace
}  // namespace exactly::broker
