// The broker's Prometheus endpoint (BrokerOptions::metrics_port,
// --metrics-port), scraped over HTTP as Prometheus does, after real traffic
// from librdkafka: offsets per partition, requests by API, transactions by
// outcome, faults injected; one endpoint for a whole Cluster, each broker
// labelled. A build without prometheus-cpp must refuse the option clearly.
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "support/broker_process.h"
#include "support/http_get.h"
#include "support/kafka_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::HttpGet;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;

#ifdef EXACTLY_BROKER_METRICS

// The value of the sample of `name` whose labels include every one of
// `labels` (each `key="value"`), or nullopt when the text has none.
std::optional<double> Sample(const std::string& text, const std::string& name,
                             const std::vector<std::string>& labels) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + "{", 0) != 0) continue;
    const size_t close = line.find('}');
    if (close == std::string::npos) continue;
    const std::string set = line.substr(0, close);
    bool all = true;
    for (const std::string& l : labels) all &= set.find(l) != std::string::npos;
    if (all) return std::stod(line.substr(close + 1));
  }
  return std::nullopt;
}

std::string Scrape(int32_t port) {
  std::optional<std::string> body =
      HttpGet(static_cast<uint16_t>(port), "/metrics");
  EXPECT_TRUE(body.has_value()) << "GET /metrics on port " << port;
  return body.value_or("");
}

void ProducePlain(const std::string& bootstrap, const std::string& topic,
                  int n) {
  RdKafkaPtr p = NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                               {"enable.idempotence", "true"},
                                               {"acks", "all"},
                                               {"linger.ms", "1"}});
  ASSERT_TRUE(p);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(ProduceOne(p.get(), topic, 0, "k", absl::StrCat("v", i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

// One transaction of `n` records, committed or aborted.
void Transact(rd_kafka_t* p, const std::string& topic, int n, bool commit) {
  rd_kafka_error_t* e = rd_kafka_begin_transaction(p);
  ASSERT_EQ(e, nullptr) << rd_kafka_error_string(e);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(ProduceOne(p, topic, 0, "k", absl::StrCat("t", i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  // Sent before the end: an abort would purge records still queued, and the
  // broker would see no transaction at all.
  ASSERT_EQ(rd_kafka_flush(p, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  e = commit ? rd_kafka_commit_transaction(p, 30000)
             : rd_kafka_abort_transaction(p, 30000);
  ASSERT_EQ(e, nullptr) << rd_kafka_error_string(e);
}

TEST(BrokerMetricsTest, ScrapeShowsOffsetsRequestsTransactionsAndFaults) {
  BrokerOptions options;
  options.metrics_port = 0;
  auto broker = Broker::Start(options);
  ASSERT_TRUE(broker.ok()) << broker.status();
  const int32_t port = (*broker)->metrics_port();
  ASSERT_GT(port, 0);
  const std::string bootstrap = (*broker)->bootstrap_servers();
  ASSERT_TRUE((*broker)->CreateTopic("metrics-plain", 1).ok());
  ASSERT_TRUE((*broker)->CreateTopic("metrics-txn", 1).ok());

  ProducePlain(bootstrap, "metrics-plain", 5);
  {
    RdKafkaPtr p =
        NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                      {"transactional.id", "metrics-writer"},
                                      {"linger.ms", "1"}});
    ASSERT_TRUE(p);
    rd_kafka_error_t* e = rd_kafka_init_transactions(p.get(), 30000);
    ASSERT_EQ(e, nullptr) << rd_kafka_error_string(e);
    Transact(p.get(), "metrics-txn", 2, /*commit=*/true);
    Transact(p.get(), "metrics-txn", 3, /*commit=*/false);
  }
  (*broker)->faults().CloseAllConnections();

  // The markers land after EndTxn is answered: wait for the log to settle.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string text;
  do {
    text = Scrape(port);
    if (Sample(text, "exactly_broker_partition_last_stable_offset",
               {"topic=\"metrics-txn\""}) == 7)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);

  const std::vector<std::string> plain = {
      "broker=\"1\"", "topic=\"metrics-plain\"", "partition=\"0\""};
  EXPECT_EQ(Sample(text, "exactly_broker_partition_high_watermark", plain), 5)
      << text;
  EXPECT_EQ(Sample(text, "exactly_broker_partition_log_end_offset", plain), 5);
  EXPECT_EQ(Sample(text, "exactly_broker_partition_last_stable_offset", plain),
            5);
  EXPECT_EQ(Sample(text, "exactly_broker_partition_log_start_offset", plain),
            0);
  // 2 committed records, a COMMIT marker, 3 aborted records, an ABORT marker.
  const std::vector<std::string> txn = {"topic=\"metrics-txn\"",
                                        "partition=\"0\""};
  EXPECT_EQ(Sample(text, "exactly_broker_partition_high_watermark", txn), 7);
  EXPECT_EQ(Sample(text, "exactly_broker_partition_last_stable_offset", txn),
            7);

  std::optional<double> produce =
      Sample(text, "exactly_broker_requests_total", {"api=\"Produce\""});
  ASSERT_TRUE(produce.has_value()) << text;
  EXPECT_GE(*produce, 3);  // at least one per transaction and the plain one
  EXPECT_GE(Sample(text, "exactly_broker_requests_total", {"api=\"EndTxn\""}),
            2);
  EXPECT_EQ(
      Sample(text, "exactly_broker_transactions_total", {"outcome=\"commit\""}),
      1);
  EXPECT_EQ(
      Sample(text, "exactly_broker_transactions_total", {"outcome=\"abort\""}),
      1);
  EXPECT_EQ(Sample(text, "exactly_broker_faults_injected_total",
                   {"broker=\"1\"", "fault=\"close_connections\""}),
            1);
  EXPECT_EQ(Sample(text, "exactly_broker_up", {"broker=\"1\""}), 1);
  EXPECT_NE(text.find("# TYPE exactly_broker_requests_total counter"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE exactly_broker_partition_high_watermark gauge"),
            std::string::npos);
}

TEST(BrokerMetricsTest, EndpointOutlivesARestartAndCountersDoNotReset) {
  BrokerOptions options;
  options.metrics_port = 0;
  auto broker = Broker::Start(options);
  ASSERT_TRUE(broker.ok()) << broker.status();
  const int32_t port = (*broker)->metrics_port();
  ProducePlain((*broker)->bootstrap_servers(), "metrics-restart", 1);
  ASSERT_TRUE((*broker)->Restart(Broker::RestartMode::kClean).ok());
  const std::string text = Scrape(port);
  EXPECT_EQ(Sample(text, "exactly_broker_faults_injected_total",
                   {"fault=\"restart_clean\""}),
            1)
      << text;
  EXPECT_GE(Sample(text, "exactly_broker_requests_total", {"api=\"Produce\""}),
            1);
  // In memory: the broker restarts empty, and serves again.
  EXPECT_EQ(Sample(text, "exactly_broker_up", {"broker=\"1\""}), 1);
  ASSERT_TRUE((*broker)->Stop().ok());
  const std::string stopped = Scrape(port);
  EXPECT_EQ(Sample(stopped, "exactly_broker_up", {"broker=\"1\""}), 0)
      << stopped;
}

TEST(BrokerMetricsTest, ClusterServesOneEndpointWithEveryBroker) {
  ClusterOptions options;
  options.brokers = 3;
  options.broker.metrics_port = 0;
  auto cluster = Cluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int32_t port = (*cluster)->metrics_port();
  ASSERT_GT(port, 0);
  for (int32_t id = 1; id <= 3; ++id)
    EXPECT_EQ((*cluster)->broker(id).metrics_port(), -1);
  ASSERT_TRUE((*cluster)->CreateTopic("metrics-replicated", 1, 3).ok());
  ProducePlain((*cluster)->bootstrap_servers(), "metrics-replicated", 4);
  absl::StatusOr<PartitionLeadership> leadership =
      (*cluster)->DescribePartition("metrics-replicated", 0);
  ASSERT_TRUE(leadership.ok());
  const std::string leader =
      absl::StrCat("broker=\"", leadership->leader, "\"");
  const std::vector<std::string> partition = {"topic=\"metrics-replicated\"",
                                              "partition=\"0\""};

  // Followers catch up on their next fetch.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string text;
  bool caught_up = false;
  while (!caught_up && std::chrono::steady_clock::now() < deadline) {
    text = Scrape(port);
    caught_up = true;
    for (int32_t id = 1; id <= 3; ++id) {
      std::vector<std::string> labels = partition;
      labels.push_back(absl::StrCat("broker=\"", id, "\""));
      caught_up &=
          Sample(text, "exactly_broker_partition_log_end_offset", labels) == 4;
    }
    if (!caught_up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(caught_up) << text;

  std::vector<std::string> on_leader = partition;
  on_leader.push_back(leader);
  EXPECT_EQ(Sample(text, "exactly_broker_partition_high_watermark", on_leader),
            4)
      << text;
  EXPECT_EQ(Sample(text, "exactly_broker_partition_leader", on_leader), 1);
  EXPECT_EQ(Sample(text, "exactly_broker_partition_isr_size", on_leader), 3);
  int leaders = 0;
  for (int32_t id = 1; id <= 3; ++id) {
    std::vector<std::string> labels = partition;
    labels.push_back(absl::StrCat("broker=\"", id, "\""));
    leaders += Sample(text, "exactly_broker_partition_leader", labels) == 1;
    EXPECT_EQ(Sample(text, "exactly_broker_up",
                     {absl::StrCat("broker=\"", id, "\"")}),
              1);
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_GE(Sample(text, "exactly_broker_requests_total",
                   {leader, "api=\"Produce\""}),
            1);

  // A killed broker stays on the endpoint, down, with its fault counted.
  const int32_t victim = leadership->leader == 3 ? 2 : 3;
  ASSERT_TRUE((*cluster)->Kill(victim).ok());
  const std::string after = Scrape(port);
  const std::string victim_label = absl::StrCat("broker=\"", victim, "\"");
  EXPECT_EQ(Sample(after, "exactly_broker_up", {victim_label}), 0) << after;
  EXPECT_EQ(Sample(after, "exactly_broker_faults_injected_total",
                   {victim_label, "fault=\"kill\""}),
            1);
}

TEST(BrokerMetricsTest, BinaryPrintsTheEndpointAfterTheBootstrapLine) {
  exactly::testing::BrokerProcess broker(EXACTLY_BROKER_BIN,
                                         {"--metrics-port", "0"});
  ASSERT_TRUE(broker.running()) << broker.error();
  const std::string line = broker.NextLine();
  const std::string prefix = "metrics=http://127.0.0.1:";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  const int port = std::stoi(line.substr(prefix.size()));
  EXPECT_NE(line.find("/metrics"), std::string::npos) << line;
  const std::string text = Scrape(port);
  EXPECT_EQ(Sample(text, "exactly_broker_up", {"broker=\"1\""}), 1) << text;
  EXPECT_TRUE(broker.Stop());
}

#else  // !EXACTLY_BROKER_METRICS

TEST(BrokerMetricsTest, WithoutPrometheusCppTheOptionFailsClearly) {
  BrokerOptions options;
  options.metrics_port = 0;
  auto broker = Broker::Start(options);
  ASSERT_FALSE(broker.ok());
  EXPECT_NE(broker.status().message().find("built without prometheus-cpp"),
            std::string_view::npos)
      << broker.status();
}

#endif  // EXACTLY_BROKER_METRICS

}  // namespace
}  // namespace exactly::broker
