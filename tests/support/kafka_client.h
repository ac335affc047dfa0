// Small librdkafka (C API) helpers for tests that drive a broker as a real
// client would.
#ifndef EXACTLY_TESTS_SUPPORT_KAFKA_CLIENT_H_
#define EXACTLY_TESTS_SUPPORT_KAFKA_CLIENT_H_

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace exactly::testing {

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

// Builds a client of `type` from `properties`; fails the test on a bad
// property.
inline RdKafkaPtr NewClient(
    rd_kafka_type_t type, const std::map<std::string, std::string>& properties,
    void (*dr_msg_cb)(rd_kafka_t*, const rd_kafka_message_t*, void*) = nullptr,
    void* opaque = nullptr) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [k, v] : properties) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      ADD_FAILURE() << "property " << k << "=" << v << ": " << err;
    }
  }
  if (dr_msg_cb != nullptr) rd_kafka_conf_set_dr_msg_cb(conf, dr_msg_cb);
  if (opaque != nullptr) rd_kafka_conf_set_opaque(conf, opaque);
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    ADD_FAILURE() << "rd_kafka_new: " << err;
    rd_kafka_conf_destroy(conf);
  }
  return RdKafkaPtr(rk);
}

// Every error librdkafka reports is consumed here; true when `error` is null,
// otherwise its text goes to `*what`.
inline bool Succeeded(rd_kafka_error_t* error, std::string* what = nullptr) {
  if (error == nullptr) return true;
  if (what != nullptr) *what = rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  return false;
}

// Counts delivery reports of a producer.
struct DeliveryCounter {
  std::atomic<int64_t> delivered{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int> last_error{0};

  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m,
                         void* opaque) {
    auto* self = static_cast<DeliveryCounter*>(opaque);
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      self->delivered.fetch_add(1);
    } else {
      self->failed.fetch_add(1);
      self->last_error.store(m->err);
    }
  }
};

// Produces `value` (with `key`) to topic/partition, retrying while the local
// queue is full.
inline rd_kafka_resp_err_t ProduceOne(rd_kafka_t* rk, const std::string& topic,
                                      int32_t partition, const std::string& key,
                                      const std::string& value) {
  for (;;) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) return err;
    rd_kafka_poll(rk, 10);
  }
}

// A consumed record.
struct ConsumedRecord {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
};

// Reads partitions [0, partitions) of `topic` from the beginning with an
// assign-only consumer until `expected` records arrived or `idle_ms` passed
// without one.
inline std::vector<ConsumedRecord> ConsumeAll(
    const std::string& bootstrap, const std::string& topic, int32_t partitions,
    const std::string& isolation, size_t expected, int idle_ms = 5000) {
  RdKafkaPtr consumer =
      NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                    {"group.id", "exactly-test-reader"},
                                    {"enable.auto.commit", "false"},
                                    {"isolation.level", isolation},
                                    {"enable.partition.eof", "false"}});
  std::vector<ConsumedRecord> out;
  if (!consumer) return out;
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(partitions);
  for (int32_t p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(consumer.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  auto last = std::chrono::steady_clock::now();
  while (out.size() < expected && std::chrono::steady_clock::now() - last <
                                      std::chrono::milliseconds(idle_ms)) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ConsumedRecord r;
      r.partition = m->partition;
      r.offset = m->offset;
      if (m->key) r.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload)
        r.value.assign(static_cast<const char*>(m->payload), m->len);
      out.push_back(std::move(r));
      last = std::chrono::steady_clock::now();
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(consumer.get());
  return out;
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_KAFKA_CLIENT_H_
