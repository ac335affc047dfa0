// A Kafka cluster for one integration test.
//
// If EXACTLY_TEST_BOOTSTRAP names a cluster (Apache Kafka, Redpanda, ...),
// tests use it; so do they the Apache Kafka cluster that scripts/kafka.sh
// keeps in the directory EXACTLY_KAFKA_CLUSTER names (kafka() then kills,
// stops and restarts its brokers: tests/support/kafka_harness.h), and the
// cluster whose bootstrap.servers is the first line of the file
// EXACTLY_TEST_BOOTSTRAP_FILE names (started on free ports after CTest set
// the tests' environment: the cluster3 label's bundled brokers). Otherwise
// Start() runs the bundled broker in this process: it writes transaction
// markers, serves read_committed, fences zombie producers, and injects faults
// (InjectErrors, InjectDelay, and everything in broker()->faults()).
// EXACTLY_TEST_CLUSTER=mock runs librdkafka's mock cluster instead (no
// transactions: tests that need them skip).
//
//   auto cluster = exactly::testing::TestCluster::Start();
//   std::string topic = exactly::testing::TestCluster::UniqueName("orders");
//   ASSERT_TRUE(cluster->CreateTopic(topic, 3).ok());
//   opts.bootstrap_servers = cluster->bootstrap_servers();
#ifndef EXACTLY_TESTS_SUPPORT_TEST_CLUSTER_H_
#define EXACTLY_TESTS_SUPPORT_TEST_CLUSTER_H_

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "exactly/broker/broker.h"
#include "support/kafka_harness.h"
#include "support/temp_dir.h"

namespace exactly::testing {

// Kafka API keys, for InjectErrors().
namespace api {
inline constexpr int16_t kProduce = 0;
inline constexpr int16_t kFetch = 1;
inline constexpr int16_t kFindCoordinator = 10;
inline constexpr int16_t kInitProducerId = 22;
inline constexpr int16_t kAddPartitionsToTxn = 24;
inline constexpr int16_t kAddOffsetsToTxn = 25;
inline constexpr int16_t kEndTxn = 26;
inline constexpr int16_t kTxnOffsetCommit = 28;
}  // namespace api

struct TestClusterOptions {
  // Partition count of topics created without an explicit one.
  int default_partitions = 3;
  // Bundled broker: keep its state in a data dir (removed with the cluster),
  // so that RestartBroker() keeps topics, records and transactions.
  bool persistent = false;
};

class TestCluster {
 public:
  static std::unique_ptr<TestCluster> Start(int default_partitions = 3) {
    return Start(TestClusterOptions{.default_partitions = default_partitions});
  }

  static std::unique_ptr<TestCluster> Start(const TestClusterOptions& options) {
    std::unique_ptr<TestCluster> cluster(
        new TestCluster(options.default_partitions));
    if (const char* env = std::getenv("EXACTLY_TEST_BOOTSTRAP");
        env != nullptr && *env != '\0') {
      cluster->external_bootstrap_ = env;
      cluster->kafka_ = KafkaHarness::FromEnv();
      return cluster;
    }
    if (const char* file = std::getenv("EXACTLY_TEST_BOOTSTRAP_FILE");
        file != nullptr && *file != '\0') {
      std::ifstream in(file);
      std::getline(in, cluster->external_bootstrap_);
      if (cluster->external_bootstrap_.empty()) {
        fprintf(stderr, "EXACTLY_TEST_BOOTSTRAP_FILE=%s names no cluster\n",
                file);
        return nullptr;
      }
      return cluster;
    }
    if (auto kafka = KafkaHarness::FromEnv()) {
      cluster->external_bootstrap_ = kafka->bootstrap_servers();
      if (cluster->external_bootstrap_.empty()) {
        fprintf(stderr, "EXACTLY_KAFKA_CLUSTER=%s holds no cluster\n",
                kafka->dir().c_str());
        return nullptr;
      }
      cluster->kafka_ = std::move(kafka);
      return cluster;
    }
    if (const char* env = std::getenv("EXACTLY_TEST_CLUSTER");
        env != nullptr && std::string_view(env) == "mock") {
      char errstr[256];
      cluster->mock_owner_ = rd_kafka_new(
          RD_KAFKA_PRODUCER, rd_kafka_conf_new(), errstr, sizeof(errstr));
      if (cluster->mock_owner_ == nullptr) return nullptr;
      cluster->mock_ = rd_kafka_mock_cluster_new(cluster->mock_owner_, 1);
      if (cluster->mock_ == nullptr) return nullptr;
      return cluster;
    }
    broker::BrokerOptions broker_options;
    broker_options.default_partitions = options.default_partitions;
    if (options.persistent) {
      cluster->data_dir_ = std::make_unique<TempDir>();
      broker_options.data_dir = cluster->data_dir_->Sub("broker");
    }
    auto broker = broker::Broker::Start(broker_options);
    if (!broker.ok()) return nullptr;
    cluster->broker_ = std::move(*broker);
    return cluster;
  }

  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;
  ~TestCluster() {
    broker_.reset();
    if (mock_ != nullptr) rd_kafka_mock_cluster_destroy(mock_);
    if (mock_owner_ != nullptr) rd_kafka_destroy(mock_owner_);
  }

  std::string bootstrap_servers() const {
    if (broker_ != nullptr) return broker_->bootstrap_servers();
    return mock_ != nullptr ? rd_kafka_mock_cluster_bootstraps(mock_)
                            : external_bootstrap_;
  }

  // Writes transaction markers, serves read_committed and fences zombie
  // producers: what tests of exactly-once visibility need.
  bool has_transactions() const { return mock_ == nullptr; }
  // Supports InjectErrors() and InjectDelay().
  bool has_fault_injection() const { return !is_external(); }
  bool is_external() const { return !external_bootstrap_.empty(); }
  // The bundled broker (fault injection, restarts, its logs), or nullptr on
  // an external or mock cluster.
  broker::Broker* broker() const { return broker_.get(); }
  // The Apache Kafka cluster scripts/kafka.sh runs (real broker faults), or
  // nullptr.
  KafkaHarness* kafka() const { return kafka_.get(); }

  absl::Status CreateTopic(const std::string& topic, int partitions = 0) {
    if (partitions <= 0) partitions = default_partitions_;
    if (broker_ != nullptr) return broker_->CreateTopic(topic, partitions);
    if (mock_ != nullptr) {
      rd_kafka_resp_err_t err =
          rd_kafka_mock_topic_create(mock_, topic.c_str(), partitions, 1);
      return err == RD_KAFKA_RESP_ERR_NO_ERROR
                 ? absl::OkStatus()
                 : absl::InternalError(rd_kafka_err2str(err));
    }
    absl::Status created = CreateTopicWithAdminApi(topic, partitions);
    if (!created.ok() || kafka_ == nullptr) return created;
    return kafka_->WaitForTopic(topic, partitions);
  }

  // The next requests of `api_key` fail, one per Kafka error code, in order.
  absl::Status InjectErrors(int16_t api_key,
                            const std::vector<int16_t>& error_codes) {
    if (broker_ != nullptr) {
      // Rules are taken first-armed first, one request each.
      for (int16_t code : error_codes) {
        broker_->faults().FailRequests({.api_key = api_key}, code, 1);
      }
      return absl::OkStatus();
    }
    if (mock_ == nullptr) {
      return absl::UnimplementedError("no fault injection on this cluster");
    }
    std::vector<rd_kafka_resp_err_t> errors;
    for (int16_t code : error_codes) {
      errors.push_back(static_cast<rd_kafka_resp_err_t>(code));
    }
    rd_kafka_mock_push_request_errors_array(mock_, api_key, errors.size(),
                                            errors.data());
    return absl::OkStatus();
  }

  // Responses to `api_key` succeed, `delay` late: the next `count` of them
  // on the mock cluster; on the bundled broker every later one (its
  // AddLatency has no count), until ClearDelays().
  absl::Status InjectDelay(int16_t api_key, std::chrono::milliseconds delay,
                           int count = 1) {
    if (broker_ != nullptr) {
      broker_->faults().AddLatency(static_cast<int32_t>(delay.count()),
                                   {.api_key = api_key});
      return absl::OkStatus();
    }
    if (mock_ == nullptr) {
      return absl::UnimplementedError("no fault injection on this cluster");
    }
    for (int i = 0; i < count; ++i) {
      rd_kafka_resp_err_t err = rd_kafka_mock_broker_push_request_error_rtts(
          mock_, kMockBrokerId, api_key, 1, RD_KAFKA_RESP_ERR_NO_ERROR,
          static_cast<int>(delay.count()));
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return absl::InternalError(rd_kafka_err2str(err));
      }
    }
    return absl::OkStatus();
  }

  // Removes the bundled broker's injected delays.
  void ClearDelays() {
    if (broker_ != nullptr) broker_->faults().AddLatency(0);
  }

  // Restarts the bundled broker on the same port (see Broker::Restart).
  absl::Status RestartBroker(broker::Broker::RestartMode mode) {
    if (broker_ == nullptr) {
      return absl::UnimplementedError("only the bundled broker restarts");
    }
    return broker_->Restart(mode);
  }

  // A name no other test (or earlier run against an external cluster) uses.
  static std::string UniqueName(std::string_view prefix) {
    static std::atomic<int> counter{0};
    static const uint32_t run = std::random_device{}();
    return absl::StrCat(std::string(prefix), "-", getpid(), "-", run, "-",
                        counter++);
  }

 private:
  static constexpr int32_t kMockBrokerId = 1;

  explicit TestCluster(int default_partitions)
      : default_partitions_(default_partitions) {}

  absl::Status CreateTopicWithAdminApi(const std::string& topic,
                                       int partitions) {
    char errstr[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", external_bootstrap_.c_str(),
                      errstr, sizeof(errstr));
    rd_kafka_t* rk =
        rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (rk == nullptr) {
      rd_kafka_conf_destroy(conf);
      return absl::InternalError(errstr);
    }
    rd_kafka_NewTopic_t* new_topic = rd_kafka_NewTopic_new(
        topic.c_str(), partitions, -1, errstr, sizeof(errstr));
    rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &new_topic, 1, nullptr, queue);
    absl::Status status = absl::DeadlineExceededError("CreateTopics");
    if (rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000)) {
      status = absl::OkStatus();
      if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        status = absl::InternalError(rd_kafka_event_error_string(event));
      } else if (const rd_kafka_CreateTopics_result_t* result =
                     rd_kafka_event_CreateTopics_result(event)) {
        size_t n = 0;
        const rd_kafka_topic_result_t** topics =
            rd_kafka_CreateTopics_result_topics(result, &n);
        for (size_t i = 0; i < n; ++i) {
          if (rd_kafka_topic_result_error(topics[i]) !=
              RD_KAFKA_RESP_ERR_NO_ERROR) {
            status = absl::InternalError(
                rd_kafka_topic_result_error_string(topics[i]));
          }
        }
      }
      rd_kafka_event_destroy(event);
    }
    rd_kafka_queue_destroy(queue);
    rd_kafka_NewTopic_destroy(new_topic);
    rd_kafka_destroy(rk);
    return status;
  }

  const int default_partitions_;
  std::string external_bootstrap_;
  std::unique_ptr<KafkaHarness> kafka_;
  std::unique_ptr<TempDir> data_dir_;  // before broker_: outlives it
  std::unique_ptr<broker::Broker> broker_;
  rd_kafka_t* mock_owner_ = nullptr;  // the mock cluster lives in its handle
  rd_kafka_mock_cluster_t* mock_ = nullptr;
};

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_TEST_CLUSTER_H_
