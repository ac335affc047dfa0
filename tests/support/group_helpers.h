// librdkafka consumer-group helpers for tests: a subscribed consumer that
// records its assignment as rebalances hand it out, commits synchronously,
// and can leave its group cleanly or die without a word.
#ifndef EXACTLY_TESTS_SUPPORT_GROUP_HELPERS_H_
#define EXACTLY_TESTS_SUPPORT_GROUP_HELPERS_H_

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/kafka_client.h"

namespace exactly::testing {

class GroupConsumer {
 public:
  // A consumer in `group` with manual commits, reading from the earliest
  // offset where nothing is committed. `extra` overrides or adds properties.
  GroupConsumer(const std::string& bootstrap, const std::string& group,
                std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> props = {
        {"bootstrap.servers", bootstrap},
        {"group.id", group},
        {"enable.auto.commit", "false"},
        {"auto.offset.reset", "earliest"},
        {"enable.partition.eof", "false"},
        {"session.timeout.ms", "6000"},
        {"heartbeat.interval.ms", "500"},
        {"partition.assignment.strategy", "range"},
        {"topic.metadata.refresh.interval.ms", "1000"},
        {"reconnect.backoff.ms", "10"},
        {"reconnect.backoff.max.ms", "200"},
    };
    for (auto& [k, v] : extra) props[k] = v;
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    for (const auto& [k, v] : props) {
      if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) !=
          RD_KAFKA_CONF_OK) {
        ADD_FAILURE() << "property " << k << "=" << v << ": " << err;
      }
    }
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_rebalance_cb(conf, &GroupConsumer::OnRebalance);
    rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (rk_ == nullptr) {
      ADD_FAILURE() << "rd_kafka_new: " << err;
      rd_kafka_conf_destroy(conf);
      return;
    }
    rd_kafka_poll_set_consumer(rk_);
  }

  ~GroupConsumer() {
    if (rk_ != nullptr) {
      rd_kafka_consumer_close(rk_);
      rd_kafka_destroy(rk_);
    }
  }

  GroupConsumer(const GroupConsumer&) = delete;
  GroupConsumer& operator=(const GroupConsumer&) = delete;

  rd_kafka_t* handle() const { return rk_; }

  void Subscribe(const std::string& topic) {
    rd_kafka_topic_partition_list_t* topics =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, topic.c_str(),
                                      RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(rk_, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  }

  // Polls once; a record, or nothing (errors are logged, not failures: a
  // consumer sees transient ones during rebalances).
  std::optional<ConsumedRecord> Poll(int timeout_ms) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, timeout_ms);
    if (m == nullptr) return std::nullopt;
    std::optional<ConsumedRecord> out;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ConsumedRecord r;
      r.partition = m->partition;
      r.offset = m->offset;
      if (m->key) r.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload) {
        r.value.assign(static_cast<const char*>(m->payload), m->len);
      }
      out = std::move(r);
    } else {
      last_error_ = m->err;
      ++errors_;
    }
    rd_kafka_message_destroy(m);
    return out;
  }

  // Commits `offset` (the next one to read) for topic[partition] and waits
  // for the broker's answer.
  rd_kafka_resp_err_t Commit(const std::string& topic, int32_t partition,
                             int64_t offset, const std::string& metadata = "") {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t* p =
        rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
    p->offset = offset;
    if (!metadata.empty()) {
      p->metadata = malloc(metadata.size());
      memcpy(p->metadata, metadata.data(), metadata.size());
      p->metadata_size = metadata.size();
    }
    rd_kafka_resp_err_t err = rd_kafka_commit(rk_, list, /*async=*/0);
    rd_kafka_topic_partition_list_destroy(list);
    return err;
  }

  // The committed offset and metadata of topic[partition], from the broker.
  std::optional<std::pair<int64_t, std::string>> Committed(
      const std::string& topic, int32_t partition) {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
    std::optional<std::pair<int64_t, std::string>> out;
    if (rd_kafka_committed(rk_, list, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        list->elems[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const rd_kafka_topic_partition_t& p = list->elems[0];
      std::string metadata;
      if (p.metadata != nullptr) {
        metadata.assign(static_cast<const char*>(p.metadata), p.metadata_size);
      }
      out.emplace(p.offset, metadata);
    }
    rd_kafka_topic_partition_list_destroy(list);
    return out;
  }

  // Leaves the group (LeaveGroup), as a consumer shutting down does.
  void Close() {
    if (rk_ == nullptr) return;
    rd_kafka_consumer_close(rk_);
    rd_kafka_destroy(rk_);
    rk_ = nullptr;
  }

  // Dies without leaving the group: no LeaveGroup, no final commit, no more
  // heartbeats; the coordinator must notice the missing session.
  void Kill() {
    if (rk_ == nullptr) return;
    rd_kafka_destroy_flags(rk_, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    rk_ = nullptr;
  }

  std::set<int32_t> assignment() const {
    std::lock_guard<std::mutex> lock(mu_);
    return assignment_;
  }
  int assignments_received() const {
    std::lock_guard<std::mutex> lock(mu_);
    return assignments_received_;
  }
  int errors() const { return errors_; }
  rd_kafka_resp_err_t last_error() const { return last_error_; }

 private:
  static void OnRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t* partitions,
                          void* opaque) {
    auto* self = static_cast<GroupConsumer*>(opaque);
    std::lock_guard<std::mutex> lock(self->mu_);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      self->assignment_.clear();
      for (int i = 0; i < partitions->cnt; ++i) {
        self->assignment_.insert(partitions->elems[i].partition);
      }
      ++self->assignments_received_;
      rd_kafka_assign(rk, partitions);
    } else {
      self->assignment_.clear();
      rd_kafka_assign(rk, nullptr);
    }
  }

  rd_kafka_t* rk_ = nullptr;
  mutable std::mutex mu_;
  std::set<int32_t> assignment_;
  int assignments_received_ = 0;
  int errors_ = 0;
  rd_kafka_resp_err_t last_error_ = RD_KAFKA_RESP_ERR_NO_ERROR;
};

// Polls each consumer in turn (calling `on_record` for what arrives) until
// `done()` or `timeout` passes; returns done(). The timeout is a safety net
// for a broken broker, not a measurement.
inline bool PollUntil(
    const std::vector<GroupConsumer*>& consumers,
    const std::function<bool()>& done,
    const std::function<void(GroupConsumer&, const ConsumedRecord&)>&
        on_record = nullptr,
    std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return done();
    for (GroupConsumer* c : consumers) {
      if (std::optional<ConsumedRecord> r = c->Poll(20)) {
        if (on_record) on_record(*c, *r);
      }
    }
  }
  return true;
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_GROUP_HELPERS_H_
