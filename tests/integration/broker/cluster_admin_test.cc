// A cluster's user-facing surfaces: the admin port's cluster commands
// (admin/cluster_admin_commands.h) and `exactly-broker --brokers N`.
#include <librdkafka/rdkafka.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "admin/cluster_admin_commands.h"
#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "support/broker_process.h"
#include "support/kafka_client.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::ConsumeAll;
using ::exactly::testing::DeliveryCounter;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;

std::string Leader(Cluster& c, const std::string& topic) {
  return absl::StrCat(c.DescribePartition(topic, 0)->leader);
}

TEST(ClusterAdminTest, CommandsDriveEachBrokersFaults) {
  auto started = Cluster::Start({.brokers = 3});
  ASSERT_TRUE(started.ok()) << started.status();
  Cluster& c = **started;
  EXPECT_EQ(RunClusterAdminCommand(
                c,
                "create-topic name=t partitions=1 replication-factor=3 "
                "min-insync-replicas=2"),
            "ok");
  const std::string leader = Leader(c, "t");
  const std::string described =
      RunClusterAdminCommand(c, "describe-partition topic=t");
  EXPECT_EQ(described.rfind("ok leader=" + leader + " epoch=0 replicas=", 0),
            0u)
      << described;

  EXPECT_EQ(RunClusterAdminCommand(c, "kill node=" + leader), "ok");
  EXPECT_FALSE(c.broker(std::stoi(leader)).running());
  EXPECT_NE(Leader(c, "t"), leader) << "the kill moved the leadership";
  EXPECT_EQ(RunClusterAdminCommand(c, "kill node=" + leader),
            "error: the broker is not running");
  EXPECT_EQ(RunClusterAdminCommand(c, "restart node=" + leader + " mode=crash"),
            "ok");
  EXPECT_TRUE(c.broker(std::stoi(leader)).running());

  const std::string other = leader == "1" ? "2" : "1";
  EXPECT_EQ(RunClusterAdminCommand(c, "isolate node=" + other), "ok");
  EXPECT_EQ(RunClusterAdminCommand(c, "heal node=" + other), "ok");
  EXPECT_EQ(RunClusterAdminCommand(c, "pause-replication node=3"), "ok");
  EXPECT_TRUE(c.broker(3).faults().replication_paused());
  EXPECT_EQ(RunClusterAdminCommand(c, "resume-replication node=3"), "ok");
  EXPECT_FALSE(c.broker(3).faults().replication_paused());
  EXPECT_EQ(RunClusterAdminCommand(c, "replication-latency node=3 ms=40"),
            "ok");
  EXPECT_EQ(c.broker(3).faults().replication_latency_ms(), 40);

  // A broker's own fault, on one broker or on all of them.
  EXPECT_EQ(RunClusterAdminCommand(
                c,
                "fail-requests api=Produce error=NOT_LEADER_OR_FOLLOWER "
                "count=2 node=2"),
            "ok");
  EXPECT_EQ(RunClusterAdminCommand(c, "latency ms=5"), "ok");
  std::vector<std::string> lines =
      absl::StrSplit(RunClusterAdminCommand(c, "history"), '\n');
  int armed_on_2 = 0;
  std::set<std::string> latency_on;
  for (const std::string& line : lines) {
    if (line.rfind("broker 2: armed: answer the next 2", 0) == 0) ++armed_on_2;
    if (line.find(": armed: 5 ms latency") != std::string::npos)
      latency_on.insert(line.substr(0, 8));
  }
  EXPECT_EQ(armed_on_2, 1);
  EXPECT_EQ(latency_on.size(), 3u) << "every running broker";
  const std::string offsets = RunClusterAdminCommand(c, "offsets topic=t");
  EXPECT_EQ(offsets.rfind("ok log_start=0", 0), 0u) << offsets;

  EXPECT_EQ(RunClusterAdminCommand(c, "isolate"), "error: isolate needs node=");
  EXPECT_EQ(RunClusterAdminCommand(c, "kill node=9"),
            "error: no broker 9: node ids are 1..3");
  EXPECT_EQ(RunClusterAdminCommand(c, "heal node=1 extra=2"),
            "error: unknown argument extra=");
  EXPECT_EQ(RunClusterAdminCommand(c, "restart node=1 mode=sideways"),
            "error: mode must be clean, crash or power-loss");
}

TEST(ClusterAdminTest, TheBinaryStartsOneBrokerPerNodeWithItsOwnFolder) {
  testing::TempDir dir;
  testing::BrokerProcess process(EXACTLY_BROKER_BIN,
                                 {"--brokers", "3", "--data-dir", dir.path()});
  ASSERT_TRUE(process.running()) << process.error();
  std::vector<std::string> servers =
      absl::StrSplit(process.bootstrap_servers(), ',');
  ASSERT_EQ(servers.size(), 3u) << process.bootstrap_servers();
  EXPECT_EQ(std::set<std::string>(servers.begin(), servers.end()).size(), 3u);

  // An automatically created topic gets the default replication factor, 3,
  // so every broker's folder holds a copy.
  DeliveryCounter counter;
  auto producer = NewClient(RD_KAFKA_PRODUCER,
                            {{"bootstrap.servers", process.bootstrap_servers()},
                             {"enable.idempotence", "true"}},
                            &DeliveryCounter::OnDelivery, &counter);
  ASSERT_TRUE(producer);
  for (int i = 0; i < 50; ++i)
    ASSERT_EQ(ProduceOne(producer.get(), "auto", 0, "k", std::to_string(i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(producer.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(counter.delivered.load(), 50);
  EXPECT_EQ(
      ConsumeAll(process.bootstrap_servers(), "auto", 1, "read_committed", 50)
          .size(),
      50u);
  for (int id = 1; id <= 3; ++id)
    EXPECT_TRUE(std::filesystem::is_directory(
        std::filesystem::path(dir.path()) / absl::StrCat("broker-", id)))
        << "broker-" << id;
  EXPECT_TRUE(process.Stop()) << "a clean exit on SIGTERM";
}

}  // namespace
}  // namespace exactly::broker
