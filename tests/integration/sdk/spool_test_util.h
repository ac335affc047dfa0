// Helpers for the spool's integration tests: options with short timeouts,
// keeping the drainer away from Kafka, and reading back exactly what a
// read_committed consumer sees, without a consumer group (assign only).
#ifndef EXACTLY_TESTS_INTEGRATION_SDK_SPOOL_TEST_UTIL_H_
#define EXACTLY_TESTS_INTEGRATION_SDK_SPOOL_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exactly/exactly.h"
#include "exactly/spool.h"
#include "sdk_test_util.h"
#include "support/temp_dir.h"

namespace exactly::testing {

struct SpooledRecord {
  std::string key;
  std::string value;
  int32_t partition = 0;
  int64_t offset = 0;
  std::map<std::string, std::string> headers;
};

// Every record of `topic` a read_committed consumer sees: an end marker is
// written to each partition first and every partition is read (assigned,
// no group) up to its marker, so the answer is complete.
inline std::vector<SpooledRecord> ReadCommittedAssigned(
    const std::string& bootstrap, const std::string& topic, int partitions) {
  static constexpr char kEnd[] = "__end__";
  const std::string token = TestCluster::UniqueName("end");
  {
    ProducerOptions o;
    o.bootstrap_servers = bootstrap;
    auto producer = Producer::Create(o);
    EXPECT_TRUE(producer.ok()) << producer.status();
    if (!producer.ok()) return {};
    for (int p = 0; p < partitions; ++p) {
      EXPECT_TRUE(
          (*producer)
              ->Send(
                  {.topic = topic, .key = kEnd, .value = token, .partition = p})
              .ok());
    }
    absl::Status s = (*producer)->Flush(std::chrono::seconds(30));
    EXPECT_TRUE(s.ok()) << s;
  }
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::map<std::string, std::string> props = {
      {"bootstrap.servers", bootstrap},
      {"group.id", "spool-test-reader"},
      {"enable.auto.commit", "false"},
      {"isolation.level", "read_committed"},
      {"enable.partition.eof", "false"}};
  for (const auto& [k, v] : props) {
    rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err);
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  EXPECT_NE(rk, nullptr) << err;
  if (rk == nullptr) return {};
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::vector<SpooledRecord> out;
  std::set<int32_t> ended;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (static_cast<int>(ended.size()) < partitions &&
         std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      SpooledRecord r;
      if (m->key != nullptr)
        r.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload != nullptr) {
        r.value.assign(static_cast<const char*>(m->payload), m->len);
      }
      r.partition = m->partition;
      r.offset = m->offset;
      rd_kafka_headers_t* headers = nullptr;
      if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* value;
        size_t size;
        for (size_t i = 0;
             rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
             RD_KAFKA_RESP_ERR_NO_ERROR;
             ++i) {
          r.headers[name] =
              value != nullptr
                  ? std::string(static_cast<const char*>(value), size)
                  : std::string();
        }
      }
      if (r.key == kEnd) {
        if (r.value == token) ended.insert(r.partition);
      } else {
        out.push_back(std::move(r));
      }
    }
    rd_kafka_message_destroy(m);
  }
  EXPECT_EQ(static_cast<int>(ended.size()), partitions)
      << "did not read " << topic << " to its end markers";
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return out;
}

// Collects the spool's reports (quarantine, drainer errors) instead of
// printing them.
class Reports {
 public:
  ErrorCallback callback() {
    return [this](const absl::Status& s) {
      std::lock_guard<std::mutex> lock(mu_);
      all_.push_back(s);
    };
  }
  std::vector<absl::Status> all() const {
    std::lock_guard<std::mutex> lock(mu_);
    return all_;
  }
  int Count(absl::StatusCode code) const {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const absl::Status& s : all_) n += s.code() == code ? 1 : 0;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<absl::Status> all_;
};

class SpoolTest : public SdkTest {
 protected:
  SpoolOptions SpoolOpts(const std::string& dir, const std::string& txn_id) {
    SpoolOptions o;
    o.dir = dir;
    o.producer.bootstrap_servers = bootstrap();
    o.producer.transactional_id = txn_id;
    o.producer.properties["linger.ms"] = "5";
    o.producer.properties["transaction.timeout.ms"] = "10000";
    o.producer.transaction_call_timeout = std::chrono::milliseconds(2000);
    o.producer.retry.initial_backoff = std::chrono::milliseconds(20);
    o.producer.retry.max_backoff = std::chrono::milliseconds(200);
    o.max_batch_time = std::chrono::milliseconds(20);
    o.checkpoint_topic = checkpoint_topic_;
    o.on_error = reports_.callback();
    return o;
  }

  // Keeps the drainer from Kafka: every InitProducerId fails (at once,
  // with an error no retry helps), so nothing is sent and the records stay
  // in the spool; the drainer keeps trying.
  void BlockDrainer() {
    ASSERT_NE(cluster_->broker(), nullptr)
        << "BlockDrainer needs the bundled broker: SKIP_WITHOUT_BUNDLED_BROKER";
    cluster_->broker()->faults().FailRequests(
        {.api_key = api::kInitProducerId},
        /*TRANSACTIONAL_ID_AUTHORIZATION_FAILED=*/53, -1);
  }
  void UnblockDrainer() {
    if (cluster_->broker() != nullptr) cluster_->broker()->faults().Clear();
  }

  static std::string Value(int i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "v%06d", i);
    return buf;
  }

  // Waits (bounded) for `done`; false if it never held.
  template <typename F>
  static bool Eventually(F done) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // The values read, checked for duplicates.
  static std::multiset<std::string> ValuesOf(
      const std::vector<SpooledRecord>& records) {
    std::multiset<std::string> out;
    for (const SpooledRecord& r : records) out.insert(r.value);
    return out;
  }

  static std::multiset<std::string> Expected(int first, int last) {
    std::multiset<std::string> out;
    for (int i = first; i <= last; ++i) out.insert(Value(i));
    return out;
  }

  TempDir temp_;
  Reports reports_;
  const std::string checkpoint_topic_ = TestCluster::UniqueName("checkpoints");
};

#define SKIP_WITHOUT_BUNDLED_BROKER()                                      \
  if (cluster_->broker() == nullptr)                                       \
  GTEST_SKIP() << "needs the bundled broker (fault injection, restarts): " \
                  "EXACTLY_TEST_BOOTSTRAP or EXACTLY_TEST_CLUSTER points " \
                  "elsewhere"

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_INTEGRATION_SDK_SPOOL_TEST_UTIL_H_
