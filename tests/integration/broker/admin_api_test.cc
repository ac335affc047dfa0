// The admin APIs a user's test suite calls, through librdkafka's Admin API (C)
// against the bundled broker in this process: create topics with configs,
// describe and alter configs, add partitions, delete records, delete and
// re-create topics, and the errors Kafka answers. Each result is checked
// against what a client sees (metadata, watermarks, consumed records) and
// against the broker's own log; then everything again across restarts with a
// data dir. Versions librdkafka 2.0.2 does not send (IncrementalAlterConfigs,
// the flexible versions) are driven with raw requests.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "support/broker_process.h"
#include "support/kafka_client.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::DeliveryCounter;
using ::exactly::testing::NewClient;
using ::exactly::testing::RdKafkaPtr;
using ::exactly::testing::TempDir;

constexpr int kAdminTimeoutMs = 30000;  // only bounds a hang; never asserted
constexpr int8_t kTopicResource = 2;

// ---- librdkafka Admin API, synchronously ----

struct TopicSpec {
  std::string name;
  int partitions = 1;
  int replication_factor = 1;
  std::map<std::string, std::string> configs;
};

struct Outcome {
  std::string name;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string message;
};

struct Synonym {
  std::string name;
  std::string value;
  rd_kafka_ConfigSource_t source;
};

struct Entry {
  std::optional<std::string> value;
  rd_kafka_ConfigSource_t source = RD_KAFKA_CONFIG_SOURCE_UNKNOWN_CONFIG;
  bool read_only = false;
  bool is_default = false;
  std::vector<Synonym> synonyms;
};

struct Described {
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string message;
  std::map<std::string, Entry> configs;
};

struct DeletedRecords {
  int32_t partition = 0;
  int64_t low_watermark = -1;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
};

std::vector<Outcome> TopicOutcomes(const rd_kafka_topic_result_t** results,
                                   size_t n) {
  std::vector<Outcome> out;
  for (size_t i = 0; i < n; ++i) {
    const char* message = rd_kafka_topic_result_error_string(results[i]);
    out.push_back({rd_kafka_topic_result_name(results[i]),
                   rd_kafka_topic_result_error(results[i]),
                   message != nullptr ? message : ""});
  }
  return out;
}

class Admin {
 public:
  explicit Admin(const std::string& bootstrap)
      : rk_(NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}})),
        queue_(rd_kafka_queue_new(rk_.get())) {}
  ~Admin() { rd_kafka_queue_destroy(queue_); }

  rd_kafka_t* handle() { return rk_.get(); }

  std::vector<Outcome> CreateTopics(const std::vector<TopicSpec>& specs,
                                    bool validate_only = false) {
    char err[512];
    std::vector<rd_kafka_NewTopic_t*> topics;
    for (const TopicSpec& s : specs) {
      rd_kafka_NewTopic_t* t = rd_kafka_NewTopic_new(
          s.name.c_str(), s.partitions, s.replication_factor, err, sizeof err);
      EXPECT_NE(t, nullptr) << err;
      for (const auto& [k, v] : s.configs)
        rd_kafka_NewTopic_set_config(t, k.c_str(), v.c_str());
      topics.push_back(t);
    }
    rd_kafka_AdminOptions_t* options = Options(RD_KAFKA_ADMIN_OP_CREATETOPICS);
    if (validate_only)
      rd_kafka_AdminOptions_set_validate_only(options, 1, err, sizeof err);
    rd_kafka_CreateTopics(rk_.get(), topics.data(), topics.size(), options,
                          queue_);
    std::vector<Outcome> out;
    if (rd_kafka_event_t* ev = Wait()) {
      size_t n = 0;
      const rd_kafka_topic_result_t** results =
          rd_kafka_CreateTopics_result_topics(
              rd_kafka_event_CreateTopics_result(ev), &n);
      out = TopicOutcomes(results, n);
      rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    for (auto* t : topics) rd_kafka_NewTopic_destroy(t);
    return out;
  }

  Outcome CreateTopic(const TopicSpec& spec, bool validate_only = false) {
    std::vector<Outcome> out = CreateTopics({spec}, validate_only);
    return out.size() == 1 ? out[0]
                           : Outcome{spec.name, RD_KAFKA_RESP_ERR__FAIL};
  }

  std::vector<Outcome> DeleteTopics(const std::vector<std::string>& names) {
    std::vector<rd_kafka_DeleteTopic_t*> topics;
    for (const std::string& n : names)
      topics.push_back(rd_kafka_DeleteTopic_new(n.c_str()));
    rd_kafka_AdminOptions_t* options = Options(RD_KAFKA_ADMIN_OP_DELETETOPICS);
    rd_kafka_DeleteTopics(rk_.get(), topics.data(), topics.size(), options,
                          queue_);
    std::vector<Outcome> out;
    if (rd_kafka_event_t* ev = Wait()) {
      size_t n = 0;
      const rd_kafka_topic_result_t** results =
          rd_kafka_DeleteTopics_result_topics(
              rd_kafka_event_DeleteTopics_result(ev), &n);
      out = TopicOutcomes(results, n);
      rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    for (auto* t : topics) rd_kafka_DeleteTopic_destroy(t);
    return out;
  }

  Outcome CreatePartitions(
      const std::string& topic, int total,
      const std::vector<std::vector<int32_t>>& assignments = {}) {
    char err[512];
    rd_kafka_NewPartitions_t* np =
        rd_kafka_NewPartitions_new(topic.c_str(), total, err, sizeof err);
    for (size_t i = 0; i < assignments.size(); ++i) {
      std::vector<int32_t> ids = assignments[i];
      rd_kafka_NewPartitions_set_replica_assignment(
          np, static_cast<int32_t>(i), ids.data(), ids.size(), err, sizeof err);
    }
    rd_kafka_AdminOptions_t* options =
        Options(RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
    rd_kafka_CreatePartitions(rk_.get(), &np, 1, options, queue_);
    Outcome out{topic, RD_KAFKA_RESP_ERR__FAIL};
    if (rd_kafka_event_t* ev = Wait()) {
      size_t n = 0;
      const rd_kafka_topic_result_t** results =
          rd_kafka_CreatePartitions_result_topics(
              rd_kafka_event_CreatePartitions_result(ev), &n);
      std::vector<Outcome> all = TopicOutcomes(results, n);
      if (all.size() == 1) out = all[0];
      rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_NewPartitions_destroy(np);
    return out;
  }

  Described DescribeConfigs(rd_kafka_ResourceType_t type,
                            const std::string& name) {
    rd_kafka_ConfigResource_t* resource =
        rd_kafka_ConfigResource_new(type, name.c_str());
    rd_kafka_AdminOptions_t* options =
        Options(RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
    rd_kafka_DescribeConfigs(rk_.get(), &resource, 1, options, queue_);
    Described out{RD_KAFKA_RESP_ERR__FAIL, "no result", {}};
    if (rd_kafka_event_t* ev = Wait()) {
      if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        out.err = rd_kafka_event_error(ev);
        out.message = rd_kafka_event_error_string(ev);
      } else {
        size_t n = 0;
        const rd_kafka_ConfigResource_t** resources =
            rd_kafka_DescribeConfigs_result_resources(
                rd_kafka_event_DescribeConfigs_result(ev), &n);
        if (n == 1) out = ReadResource(resources[0]);
      }
      rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_ConfigResource_destroy(resource);
    return out;
  }

  Outcome AlterTopicConfigs(const std::string& topic,
                            const std::map<std::string, std::string>& configs,
                            bool validate_only = false) {
    return AlterConfigs(RD_KAFKA_RESOURCE_TOPIC, topic, configs, validate_only);
  }

  Outcome AlterConfigs(rd_kafka_ResourceType_t type, const std::string& topic,
                       const std::map<std::string, std::string>& configs,
                       bool validate_only = false) {
    char err[512];
    rd_kafka_ConfigResource_t* resource =
        rd_kafka_ConfigResource_new(type, topic.c_str());
    for (const auto& [k, v] : configs)
      rd_kafka_ConfigResource_set_config(resource, k.c_str(), v.c_str());
    rd_kafka_AdminOptions_t* options = Options(RD_KAFKA_ADMIN_OP_ALTERCONFIGS);
    if (validate_only)
      rd_kafka_AdminOptions_set_validate_only(options, 1, err, sizeof err);
    rd_kafka_AlterConfigs(rk_.get(), &resource, 1, options, queue_);
    Outcome out{topic, RD_KAFKA_RESP_ERR__FAIL};
    if (rd_kafka_event_t* ev = Wait()) {
      if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        out.err = rd_kafka_event_error(ev);
        out.message = rd_kafka_event_error_string(ev);
      } else {
        size_t n = 0;
        const rd_kafka_ConfigResource_t** resources =
            rd_kafka_AlterConfigs_result_resources(
                rd_kafka_event_AlterConfigs_result(ev), &n);
        if (n == 1) {
          out.err = rd_kafka_ConfigResource_error(resources[0]);
          const char* m = rd_kafka_ConfigResource_error_string(resources[0]);
          out.message = m != nullptr ? m : "";
        }
      }
      rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_ConfigResource_destroy(resource);
    return out;
  }

  std::vector<DeletedRecords> DeleteRecords(
      const std::string& topic,
      const std::vector<std::pair<int32_t, int64_t>>& before) {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(before.size()));
    for (const auto& [partition, offset] : before)
      rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)
          ->offset = offset;
    rd_kafka_DeleteRecords_t* del = rd_kafka_DeleteRecords_new(list);
    rd_kafka_topic_partition_list_destroy(list);
    rd_kafka_AdminOptions_t* options = Options(RD_KAFKA_ADMIN_OP_DELETERECORDS);
    rd_kafka_DeleteRecords(rk_.get(), &del, 1, options, queue_);
    std::vector<DeletedRecords> out;
    if (rd_kafka_event_t* ev = Wait()) {
      EXPECT_EQ(rd_kafka_event_error(ev), RD_KAFKA_RESP_ERR_NO_ERROR)
          << rd_kafka_event_error_string(ev);
      if (const rd_kafka_DeleteRecords_result_t* result =
              rd_kafka_event_DeleteRecords_result(ev)) {
        const rd_kafka_topic_partition_list_t* offsets =
            rd_kafka_DeleteRecords_result_offsets(result);
        for (int i = 0; offsets != nullptr && i < offsets->cnt; ++i) {
          const rd_kafka_topic_partition_t& p = offsets->elems[i];
          out.push_back({p.partition, p.offset, p.err});
        }
      }
      rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_DeleteRecords_destroy(del);
    return out;
  }

  // The partition count of `topic` in a metadata response for all topics (so
  // that asking does not create it); -1 if it is not listed.
  int PartitionCount(const std::string& topic) {
    const rd_kafka_metadata_t* md = nullptr;
    if (rd_kafka_metadata(rk_.get(), 1, nullptr, &md, kAdminTimeoutMs) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      return -2;
    }
    int count = -1;
    for (int i = 0; i < md->topic_cnt; ++i) {
      if (topic == md->topics[i].topic) count = md->topics[i].partition_cnt;
    }
    rd_kafka_metadata_destroy(md);
    return count;
  }

  // (low, high) watermarks through ListOffsets EARLIEST and LATEST.
  std::pair<int64_t, int64_t> Watermarks(const std::string& topic,
                                         int32_t partition) {
    int64_t low = -100, high = -100;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        rk_.get(), topic.c_str(), partition, &low, &high, kAdminTimeoutMs);
    EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2name(err);
    return {low, high};
  }

 private:
  rd_kafka_AdminOptions_t* Options(rd_kafka_admin_op_t op) {
    char err[512];
    rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk_.get(), op);
    rd_kafka_AdminOptions_set_request_timeout(options, kAdminTimeoutMs, err,
                                              sizeof err);
    return options;
  }

  rd_kafka_event_t* Wait() {
    rd_kafka_event_t* ev = rd_kafka_queue_poll(queue_, kAdminTimeoutMs + 5000);
    EXPECT_NE(ev, nullptr) << "no admin result";
    return ev;
  }

  static Described ReadResource(const rd_kafka_ConfigResource_t* r) {
    Described out;
    out.err = rd_kafka_ConfigResource_error(r);
    const char* m = rd_kafka_ConfigResource_error_string(r);
    out.message = m != nullptr ? m : "";
    size_t n = 0;
    const rd_kafka_ConfigEntry_t** entries =
        rd_kafka_ConfigResource_configs(r, &n);
    for (size_t i = 0; i < n; ++i) {
      Entry e;
      const char* v = rd_kafka_ConfigEntry_value(entries[i]);
      if (v != nullptr) e.value = v;
      e.source = rd_kafka_ConfigEntry_source(entries[i]);
      e.read_only = rd_kafka_ConfigEntry_is_read_only(entries[i]);
      e.is_default = rd_kafka_ConfigEntry_is_default(entries[i]);
      size_t sn = 0;
      const rd_kafka_ConfigEntry_t** syns =
          rd_kafka_ConfigEntry_synonyms(entries[i], &sn);
      for (size_t j = 0; j < sn; ++j) {
        const char* sv = rd_kafka_ConfigEntry_value(syns[j]);
        e.synonyms.push_back({rd_kafka_ConfigEntry_name(syns[j]),
                              sv != nullptr ? sv : "",
                              rd_kafka_ConfigEntry_source(syns[j])});
      }
      out.configs[rd_kafka_ConfigEntry_name(entries[i])] = std::move(e);
    }
    return out;
  }

  RdKafkaPtr rk_;
  rd_kafka_queue_t* queue_;
};

// ---- Producing and consuming ----

// A plain producer that sends each message in its own batch (Produce() flushes
// after every message), so that tests know the batch boundaries.
class Producer {
 public:
  explicit Producer(const std::string& bootstrap)
      : rk_(NewClient(RD_KAFKA_PRODUCER,
                      {{"bootstrap.servers", bootstrap},
                       {"linger.ms", "0"},
                       {"message.timeout.ms", "30000"},
                       {"allow.auto.create.topics", "false"}},
                      &DeliveryCounter::OnDelivery, &counter_)) {}

  // Produces one record and waits for its delivery report; returns its error.
  rd_kafka_resp_err_t Produce(const std::string& topic, int32_t partition,
                              const std::optional<std::string>& key,
                              const std::string& value) {
    int64_t failed = counter_.failed.load();
    const void* key_data = key ? key->data() : nullptr;
    size_t key_size = key ? key->size() : 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_.get(), RD_KAFKA_V_TOPIC(topic.c_str()),
        RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_KEY(key_data, key_size),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return err;
    err = rd_kafka_flush(rk_.get(), kAdminTimeoutMs);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return err;
    if (counter_.failed.load() != failed) {
      return static_cast<rd_kafka_resp_err_t>(counter_.last_error.load());
    }
    return RD_KAFKA_RESP_ERR_NO_ERROR;
  }

  void ProduceN(const std::string& topic, int32_t partition, int n,
                const std::string& prefix = "v") {
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(Produce(topic, partition, absl::StrCat("k", i),
                        absl::StrCat(prefix, i)),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
  }

 private:
  DeliveryCounter counter_;
  RdKafkaPtr rk_;
};

struct Consumed {
  std::vector<std::pair<int64_t, std::string>> records;  // offset, value
  rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
};

// Reads `topic`[`partition`] from `offset` with auto.offset.reset=error until
// `expected` records arrived or an error came; polls are bounded in number.
Consumed ConsumeFrom(const std::string& bootstrap, const std::string& topic,
                     int32_t partition, int64_t offset, size_t expected) {
  Consumed out;
  RdKafkaPtr consumer =
      NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                    {"group.id", "admin-test-reader"},
                                    {"enable.auto.commit", "false"},
                                    {"auto.offset.reset", "error"},
                                    {"enable.partition.eof", "true"}});
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)->offset =
      offset;
  rd_kafka_assign(consumer.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  for (int polls = 0; polls < 300 && out.records.size() < expected; ++polls) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      rd_kafka_message_destroy(m);
      continue;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      out.first_error = m->err;
      rd_kafka_message_destroy(m);
      break;
    }
    out.records.emplace_back(
        m->offset, std::string(static_cast<const char*>(m->payload), m->len));
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(consumer.get());
  return out;
}

// Commits `offsets` of `topic` for `group` as an assign-only consumer does.
rd_kafka_resp_err_t CommitOffsets(const std::string& bootstrap,
                                  const std::string& group,
                                  const std::string& topic,
                                  const std::map<int32_t, int64_t>& offsets) {
  RdKafkaPtr consumer =
      NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                    {"group.id", group},
                                    {"enable.auto.commit", "false"}});
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size()));
  for (const auto& [partition, offset] : offsets)
    rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)->offset =
        offset;
  rd_kafka_resp_err_t err = rd_kafka_commit(consumer.get(), list, 0);
  for (int i = 0; i < list->cnt; ++i) {
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) err = list->elems[i].err;
  }
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_consumer_close(consumer.get());
  return err;
}

// The offset `group` committed for `topic`[`partition`]
// (RD_KAFKA_OFFSET_INVALID if none), through OffsetFetch.
int64_t Committed(const std::string& bootstrap, const std::string& group,
                  const std::string& topic, int32_t partition) {
  RdKafkaPtr consumer =
      NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                    {"group.id", group},
                                    {"enable.auto.commit", "false"}});
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition);
  rd_kafka_resp_err_t err =
      rd_kafka_committed(consumer.get(), list, kAdminTimeoutMs);
  EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2name(err);
  int64_t offset = list->elems[0].offset;
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_consumer_close(consumer.get());
  return offset;
}

// ---- Raw requests, for the versions librdkafka 2.0.2 does not send ----

using ::exactly::testing::RawClient;

std::string ErrName(rd_kafka_resp_err_t err) { return rd_kafka_err2name(err); }

std::pair<int64_t, int64_t> Marks(int64_t low, int64_t high) {
  return {low, high};
}

const Entry& Config(const Described& d, const std::string& name) {
  static const Entry kMissing{};
  auto it = d.configs.find(name);
  EXPECT_NE(it, d.configs.end()) << "config " << name << " not described";
  return it == d.configs.end() ? kMissing : it->second;
}

std::unique_ptr<Broker> StartBroker(BrokerOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Broker>> broker = Broker::Start(options);
  EXPECT_TRUE(broker.ok()) << broker.status();
  return broker.ok() ? std::move(*broker) : nullptr;
}

// ---- CreateTopics ----

TEST(AdminApiTest, CreateTopicsWithConfigsIsDescribedAsCreated) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  const std::map<std::string, std::string> configs = {
      {"cleanup.policy", "delete"},
      {"retention.ms", "3600000"},
      {"retention.bytes", "1048576"},
      {"max.message.bytes", "65536"},
      {"min.insync.replicas", "1"},
      {"message.timestamp.type", "LogAppendTime"}};
  Outcome created = admin.CreateTopic({"orders", 3, 1, configs});
  EXPECT_EQ(created.err, RD_KAFKA_RESP_ERR_NO_ERROR) << created.message;
  EXPECT_EQ(admin.PartitionCount("orders"), 3);

  Described d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "orders");
  ASSERT_EQ(d.err, RD_KAFKA_RESP_ERR_NO_ERROR) << d.message;
  for (const auto& [name, value] : configs) {
    const Entry& e = Config(d, name);
    EXPECT_EQ(e.value, value) << name;
    EXPECT_EQ(e.source, RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG) << name;
    EXPECT_FALSE(e.is_default) << name;
    EXPECT_FALSE(e.read_only) << name;
  }
  // An override's synonyms: the override, then the broker config it shadows.
  const Entry& retention = Config(d, "retention.ms");
  ASSERT_EQ(retention.synonyms.size(), 2u);
  EXPECT_EQ(retention.synonyms[0].name, "retention.ms");
  EXPECT_EQ(retention.synonyms[0].source,
            RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
  EXPECT_EQ(retention.synonyms[1].name, "log.retention.ms");
  EXPECT_EQ(retention.synonyms[1].value, "-1");
  EXPECT_EQ(retention.synonyms[1].source,
            RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
  // Configs not set come from the defaults.
  const Entry& segment = Config(d, "segment.bytes");
  EXPECT_EQ(segment.value, "1073741824");
  EXPECT_EQ(segment.source, RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
  EXPECT_TRUE(segment.is_default);
  // Every topic config Kafka defines is listed.
  EXPECT_GE(d.configs.size(), 25u);
  EXPECT_EQ(Config(d, "compression.type").value, "producer");

  // The LogAppendTime config is honored: the broker's clock stamps the record.
  Producer producer(broker->bootstrap_servers());
  ASSERT_EQ(producer.Produce("orders", 0, "k", "v"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  absl::StatusOr<std::vector<LoggedBatch>> log = broker->ReadLog("orders", 0);
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->size(), 1u);
  EXPECT_GT(log->front().records.front().timestamp, 0);
}

TEST(AdminApiTest, CreateTopicsAnswersKafkasErrors) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  ASSERT_EQ(admin.CreateTopic({"taken", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);

  std::vector<Outcome> out = admin.CreateTopics({
      {"taken", 1},
      {"zero-partitions", 0},
      {"three-replicas", 1, 3},
      {"bad name!", 1},
      {"unknown-config", 1, 1, {{"no.such.config", "1"}}},
      {"bad-value", 1, 1, {{"retention.ms", "soon"}}},
      {"bad-policy", 1, 1, {{"cleanup.policy", "forever"}}},
      {"fine", 2, -1},
  });
  std::map<std::string, rd_kafka_resp_err_t> errors;
  for (const Outcome& o : out) errors[o.name] = o.err;
  EXPECT_EQ(ErrName(errors["taken"]), "TOPIC_ALREADY_EXISTS");
  EXPECT_EQ(ErrName(errors["zero-partitions"]), "INVALID_PARTITIONS");
  EXPECT_EQ(ErrName(errors["three-replicas"]), "INVALID_REPLICATION_FACTOR");
  EXPECT_EQ(ErrName(errors["bad name!"]), "TOPIC_EXCEPTION");
  EXPECT_EQ(ErrName(errors["unknown-config"]), "INVALID_CONFIG");
  EXPECT_EQ(ErrName(errors["bad-value"]), "INVALID_CONFIG");
  EXPECT_EQ(ErrName(errors["bad-policy"]), "INVALID_CONFIG");
  EXPECT_EQ(ErrName(errors["fine"]), "NO_ERROR");
  for (const Outcome& o : out) {
    if (o.name != "fine") {
      EXPECT_FALSE(o.message.empty()) << o.name;
    }
  }
  EXPECT_EQ(admin.PartitionCount("fine"), 2);
  for (const char* failed : {"zero-partitions", "three-replicas",
                             "unknown-config", "bad-value", "bad-policy"}) {
    EXPECT_EQ(admin.PartitionCount(failed), -1) << failed;
  }

  // validate_only answers as a real creation would, and creates nothing.
  EXPECT_EQ(admin.CreateTopic({"checked-only", 4}, /*validate_only=*/true).err,
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(ErrName(admin.CreateTopic({"taken", 1}, true).err),
            "TOPIC_ALREADY_EXISTS");
  EXPECT_EQ(ErrName(admin.CreateTopic({"checked-only", 1, 2}, true).err),
            "INVALID_REPLICATION_FACTOR");
  EXPECT_EQ(admin.PartitionCount("checked-only"), -1);

  // '.' and '_' collide in metric names: Kafka refuses the second.
  EXPECT_EQ(admin.CreateTopic({"metrics.a", 1}).err,
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(ErrName(admin.CreateTopic({"metrics_a", 1}).err),
            "TOPIC_EXCEPTION");
}

// ---- DescribeConfigs ----

TEST(AdminApiTest, DescribeConfigsOfTheBrokerAndErrors) {
  BrokerOptions options;
  options.default_partitions = 4;
  auto broker = StartBroker(options);
  Admin admin(broker->bootstrap_servers());

  Described b = admin.DescribeConfigs(RD_KAFKA_RESOURCE_BROKER, "1");
  ASSERT_EQ(b.err, RD_KAFKA_RESP_ERR_NO_ERROR) << b.message;
  EXPECT_EQ(Config(b, "broker.id").value, "1");
  EXPECT_EQ(Config(b, "num.partitions").value, "4");
  EXPECT_EQ(Config(b, "num.partitions").source,
            RD_KAFKA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
  EXPECT_TRUE(Config(b, "num.partitions").read_only);
  EXPECT_EQ(Config(b, "message.max.bytes").value, "1048588");
  EXPECT_EQ(Config(b, "message.max.bytes").source,
            RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);

  Described unknown = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "nope");
  EXPECT_EQ(ErrName(unknown.err), "UNKNOWN_TOPIC_OR_PART");
  EXPECT_TRUE(unknown.configs.empty());
  Described bad = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "bad name!");
  EXPECT_EQ(ErrName(bad.err), "TOPIC_EXCEPTION");

  // Another broker id (librdkafka would wait for broker 2 to appear, so this
  // one goes raw), and what Kafka answers for the other resource kinds.
  RawClient raw(broker->port());
  protocol::DescribeConfigsRequest request;
  for (auto [type, name] : std::vector<std::pair<int8_t, std::string>>{
           {4, "2"}, {4, "one"}, {4, ""}, {8, "1"}, {8, ""}, {99, "x"}}) {
    request.resources.push_back({type, name, std::nullopt, {}});
  }
  for (int16_t v : {0, 1, 2}) {
    auto response = raw.Call<protocol::DescribeConfigsResponse>(request, v);
    ASSERT_EQ(response.results.size(), 6u);
    std::vector<std::string> codes;
    for (const auto& r : response.results)
      codes.emplace_back(protocol::ErrorCodeName(r.error_code));
    EXPECT_EQ(codes, (std::vector<std::string>{
                         "INVALID_REQUEST", "INVALID_REQUEST", "NONE", "NONE",
                         "INVALID_REQUEST", "INVALID_REQUEST"}))
        << "v" << v;
    EXPECT_TRUE(response.results[2].configs.empty());
    EXPECT_TRUE(response.results[0].error_message.has_value());
  }
}

TEST(AdminApiTest, DescribeConfigsV0ReportsIsDefaultAndKeysAsked) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("t", 1, {{"retention.ms", "1000"}}).ok());
  RawClient raw(broker->port());
  protocol::DescribeConfigsRequest request;
  request.resources.push_back(
      {kTopicResource,
       "t",
       std::vector<std::string>{"retention.ms", "segment.ms", "no.such"},
       {}});
  request.include_synonyms = true;
  auto v0 = raw.Call<protocol::DescribeConfigsResponse>(request, 0);
  ASSERT_EQ(v0.results.size(), 1u);
  ASSERT_EQ(v0.results[0].configs.size(), 2u);
  EXPECT_EQ(v0.results[0].configs[0].name, "retention.ms");
  EXPECT_EQ(v0.results[0].configs[0].value, "1000");
  EXPECT_FALSE(v0.results[0].configs[0].is_default);
  EXPECT_EQ(v0.results[0].configs[1].name, "segment.ms");
  EXPECT_TRUE(v0.results[0].configs[1].is_default);
  EXPECT_TRUE(v0.results[0].configs[0].synonyms.empty());

  auto v2 = raw.Call<protocol::DescribeConfigsResponse>(request, 2);
  ASSERT_EQ(v2.results[0].configs.size(), 2u);
  EXPECT_EQ(v2.results[0].configs[0].config_source, 1);
  EXPECT_EQ(v2.results[0].configs[0].synonyms.size(), 2u);
  EXPECT_EQ(v2.results[0].configs[1].config_source, 5);
  request.include_synonyms = false;
  auto without = raw.Call<protocol::DescribeConfigsResponse>(request, 1);
  EXPECT_TRUE(without.results[0].configs[0].synonyms.empty());
}

// ---- AlterConfigs and honored configs ----

TEST(AdminApiTest, AlterConfigsReplacesTheWholeSetAndValidates) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  ASSERT_EQ(
      admin
          .CreateTopic({"alter",
                        1,
                        1,
                        {{"retention.ms", "60000"}, {"segment.ms", "100000"}}})
          .err,
      RD_KAFKA_RESP_ERR_NO_ERROR);

  Outcome altered = admin.AlterTopicConfigs(
      "alter", {{"retention.ms", "120000"}, {"max.message.bytes", "5000"}});
  EXPECT_EQ(altered.err, RD_KAFKA_RESP_ERR_NO_ERROR) << altered.message;
  Described d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "alter");
  EXPECT_EQ(Config(d, "retention.ms").value, "120000");
  EXPECT_EQ(Config(d, "max.message.bytes").value, "5000");
  EXPECT_EQ(Config(d, "max.message.bytes").source,
            RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
  // Not named in the AlterConfigs: back to the default.
  EXPECT_EQ(Config(d, "segment.ms").value, "604800000");
  EXPECT_EQ(Config(d, "segment.ms").source,
            RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);

  EXPECT_EQ(ErrName(admin.AlterTopicConfigs("alter", {{"bogus", "1"}}).err),
            "INVALID_CONFIG");
  EXPECT_EQ(
      ErrName(admin.AlterTopicConfigs("alter", {{"retention.ms", "x"}}).err),
      "INVALID_CONFIG");
  EXPECT_EQ(
      ErrName(admin.AlterTopicConfigs("missing", {{"retention.ms", "1"}}).err),
      "UNKNOWN_TOPIC_OR_PART");
  EXPECT_EQ(admin
                .AlterTopicConfigs("alter", {{"retention.ms", "1"}},
                                   /*validate_only=*/true)
                .err,
            RD_KAFKA_RESP_ERR_NO_ERROR);
  // A failed or validate-only alter changes nothing.
  d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "alter");
  EXPECT_EQ(Config(d, "retention.ms").value, "120000");
  EXPECT_EQ(Config(d, "max.message.bytes").value, "5000");
}

TEST(AdminApiTest, MaxMessageBytesRejectsLargerBatchesAndFollowsAlter) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  ASSERT_EQ(
      admin.CreateTopic({"small", 1, 1, {{"max.message.bytes", "1024"}}}).err,
      RD_KAFKA_RESP_ERR_NO_ERROR);
  Producer producer(broker->bootstrap_servers());
  const std::string big(2000, 'x');
  EXPECT_EQ(producer.Produce("small", 0, "k", "fits"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(ErrName(producer.Produce("small", 0, "k", big)),
            "MSG_SIZE_TOO_LARGE");
  EXPECT_EQ(admin.Watermarks("small", 0).second, 1);

  ASSERT_EQ(
      admin.AlterTopicConfigs("small", {{"max.message.bytes", "4096"}}).err,
      RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(producer.Produce("small", 0, "k", big), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(admin.Watermarks("small", 0).second, 2);
}

TEST(AdminApiTest, RetentionBytesDeletesWholeOldBatchesOnAlterAndAppend) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  ASSERT_EQ(admin.CreateTopic({"kept", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
  Producer producer(broker->bootstrap_servers());
  producer.ProduceN("kept", 0, 20);
  absl::StatusOr<std::vector<LoggedBatch>> before = broker->ReadLog("kept", 0);
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->size(), 20u);
  EXPECT_EQ(admin.Watermarks("kept", 0), Marks(0, 20));

  // About five batches' worth: the oldest batches go as soon as the config
  // changes, whole, until what is left fits.
  ASSERT_EQ(admin.AlterTopicConfigs("kept", {{"retention.bytes", "400"}}).err,
            RD_KAFKA_RESP_ERR_NO_ERROR);
  absl::StatusOr<std::vector<LoggedBatch>> after = broker->ReadLog("kept", 0);
  ASSERT_TRUE(after.ok());
  ASSERT_FALSE(after->empty());
  ASSERT_LT(after->size(), 20u);
  const int64_t start = after->front().base_offset;
  EXPECT_EQ(after->back().last_offset, 19);
  absl::StatusOr<PartitionOffsets> offsets = broker->Offsets("kept", 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->log_start_offset, start) << "whole batches only";
  EXPECT_EQ(admin.Watermarks("kept", 0), Marks(start, 20));
  Consumed rest = ConsumeFrom(broker->bootstrap_servers(), "kept", 0,
                              RD_KAFKA_OFFSET_BEGINNING, 20 - start);
  ASSERT_EQ(rest.records.size(), static_cast<size_t>(20 - start));
  EXPECT_EQ(rest.records.front().first, start);
  EXPECT_EQ(rest.records.front().second, absl::StrCat("v", start));

  // Every batch here is over 61 bytes (its header) and under 100: 400 bytes
  // keep 4 to 6 of them.
  EXPECT_GE(after->size(), 4u);
  EXPECT_LE(after->size(), 6u);

  // Later appends keep the partition within the limit too.
  producer.ProduceN("kept", 0, 10, "w");
  absl::StatusOr<std::vector<LoggedBatch>> later = broker->ReadLog("kept", 0);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->back().last_offset, 29);
  EXPECT_GE(later->front().base_offset, 24);
  EXPECT_LE(later->size(), 6u);
}

TEST(AdminApiTest, CompactedTopicsRefuseKeylessRecordsAndDeleteRecords) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  ASSERT_EQ(admin
                .CreateTopic(
                    {"compacted",
                     1,
                     1,
                     {{"cleanup.policy", "compact"}, {"retention.bytes", "0"}}})
                .err,
            RD_KAFKA_RESP_ERR_NO_ERROR);
  Producer producer(broker->bootstrap_servers());
  EXPECT_EQ(producer.Produce("compacted", 0, "key", "v"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(ErrName(producer.Produce("compacted", 0, std::nullopt, "v")),
            "INVALID_RECORD");
  // retention.bytes does not apply without cleanup.policy=delete.
  EXPECT_EQ(admin.Watermarks("compacted", 0), Marks(0, 1));
  std::vector<DeletedRecords> deleted =
      admin.DeleteRecords("compacted", {{0, 1}});
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(ErrName(deleted[0].err), "POLICY_VIOLATION");
}

// ---- CreatePartitions ----

TEST(AdminApiTest, CreatePartitionsGrowsTopicsAndAnswersKafkasErrors) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  ASSERT_EQ(admin.CreateTopic({"grow", 2}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
  Outcome grown = admin.CreatePartitions("grow", 5);
  EXPECT_EQ(grown.err, RD_KAFKA_RESP_ERR_NO_ERROR) << grown.message;
  EXPECT_EQ(admin.PartitionCount("grow"), 5);
  Producer producer(broker->bootstrap_servers());
  EXPECT_EQ(producer.Produce("grow", 4, "k", "in a new partition"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(admin.Watermarks("grow", 4).second, 1);

  EXPECT_EQ(ErrName(admin.CreatePartitions("grow", 3).err),
            "INVALID_PARTITIONS");
  EXPECT_EQ(ErrName(admin.CreatePartitions("grow", 5).err),
            "INVALID_PARTITIONS");
  EXPECT_EQ(ErrName(admin.CreatePartitions("absent", 5).err),
            "UNKNOWN_TOPIC_OR_PART");
  EXPECT_EQ(ErrName(admin.CreatePartitions("grow", 6, {{2}}).err),
            "INVALID_REPLICA_ASSIGNMENT");
  EXPECT_EQ(admin.CreatePartitions("grow", 6, {{1}}).err,
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(admin.PartitionCount("grow"), 6);
}

// ---- DeleteRecords ----

TEST(AdminApiTest, DeleteRecordsMovesTheLogStartForFetchAndListOffsets) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  ASSERT_EQ(admin.CreateTopic({"trim", 2}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
  Producer producer(broker->bootstrap_servers());
  producer.ProduceN("trim", 0, 10);
  producer.ProduceN("trim", 1, 3);

  std::vector<DeletedRecords> deleted =
      admin.DeleteRecords("trim", {{0, 4}, {1, RD_KAFKA_OFFSET_END}});
  ASSERT_EQ(deleted.size(), 2u);
  for (const DeletedRecords& d : deleted) {
    EXPECT_EQ(d.err, RD_KAFKA_RESP_ERR_NO_ERROR) << ErrName(d.err);
    EXPECT_EQ(d.low_watermark, d.partition == 0 ? 4 : 3);
  }
  EXPECT_EQ(admin.Watermarks("trim", 0), Marks(4, 10));
  EXPECT_EQ(admin.Watermarks("trim", 1), Marks(3, 3));
  // The whole batches below the new start are gone from the broker's log.
  absl::StatusOr<std::vector<LoggedBatch>> log = broker->ReadLog("trim", 0);
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->size(), 6u);
  EXPECT_EQ(log->front().base_offset, 4);

  // A fetch below the start gets OFFSET_OUT_OF_RANGE (librdkafka reports it as
  // an auto.offset.reset=error failure); from the start it reads what is left.
  Consumed below = ConsumeFrom(broker->bootstrap_servers(), "trim", 0, 0, 1);
  EXPECT_EQ(ErrName(below.first_error), "_AUTO_OFFSET_RESET");
  EXPECT_TRUE(below.records.empty());
  Consumed from_start = ConsumeFrom(broker->bootstrap_servers(), "trim", 0,
                                    RD_KAFKA_OFFSET_BEGINNING, 6);
  ASSERT_EQ(from_start.records.size(), 6u);
  EXPECT_EQ(from_start.records.front(),
            std::make_pair(int64_t{4}, std::string("v4")));

  // Above the high watermark: OFFSET_OUT_OF_RANGE; at or below the start: no
  // change.
  deleted = admin.DeleteRecords("trim", {{0, 11}});
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(ErrName(deleted[0].err), "OFFSET_OUT_OF_RANGE");
  deleted = admin.DeleteRecords("trim", {{0, 2}});
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].err, RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(deleted[0].low_watermark, 4);
  EXPECT_EQ(admin.Watermarks("trim", 0).first, 4);
}

TEST(AdminApiTest, DeleteRecordsInsideABatchKeepsTheBatch) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("mid", 1).ok());
  // Five records in one batch, sent as one Produce request.
  std::vector<protocol::RecordSpec> records(5);
  for (int i = 0; i < 5; ++i) {
    records[static_cast<size_t>(i)].key = "k";
    records[static_cast<size_t>(i)].value = absl::StrCat("v", i);
  }
  absl::StatusOr<std::string> batch =
      protocol::BuildRecordBatch(protocol::RecordBatchSpec{}, records);
  ASSERT_TRUE(batch.ok()) << batch.status();
  protocol::ProduceRequest produce;
  produce.acks = -1;
  produce.timeout_ms = 30000;
  produce.topics.push_back({"mid", {{0, {false, {*batch}}, {}}}, {}});
  RawClient raw(broker->port());
  auto produced = raw.Call<protocol::ProduceResponse>(produce, 3);
  ASSERT_EQ(produced.topics.size(), 1u);
  ASSERT_EQ(produced.topics[0].partitions[0].error_code, 0);
  absl::StatusOr<std::vector<LoggedBatch>> log = broker->ReadLog("mid", 0);
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->size(), 1u) << "the records did not share a batch";

  Admin admin(broker->bootstrap_servers());
  std::vector<DeletedRecords> deleted = admin.DeleteRecords("mid", {{0, 2}});
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].low_watermark, 2);
  EXPECT_EQ(broker->ReadLog("mid", 0)->size(), 1u);
  EXPECT_EQ(admin.Watermarks("mid", 0), Marks(2, 5));
  Consumed rest = ConsumeFrom(broker->bootstrap_servers(), "mid", 0,
                              RD_KAFKA_OFFSET_BEGINNING, 3);
  ASSERT_EQ(rest.records.size(), 3u);
  EXPECT_EQ(rest.records.front().first, 2);
}

// ---- DeleteTopics ----

TEST(AdminApiTest, DeleteTopicsThenRecreateStartsEmpty) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  ASSERT_EQ(admin.CreateTopic({"doomed", 2, 1, {{"retention.ms", "5000"}}}).err,
            RD_KAFKA_RESP_ERR_NO_ERROR);
  Producer producer(broker->bootstrap_servers());
  producer.ProduceN("doomed", 0, 5);
  producer.ProduceN("doomed", 1, 2);
  const std::string bootstrap = broker->bootstrap_servers();
  ASSERT_EQ(admin.CreateTopic({"kept", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(CommitOffsets(bootstrap, "readers", "doomed", {{0, 3}, {1, 2}}),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(CommitOffsets(bootstrap, "readers", "kept", {{0, 7}}),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(Committed(bootstrap, "readers", "doomed", 0), 3);

  std::vector<Outcome> out = admin.DeleteTopics({"doomed", "never-was"});
  ASSERT_EQ(out.size(), 2u);
  std::map<std::string, rd_kafka_resp_err_t> errors;
  for (const Outcome& o : out) errors[o.name] = o.err;
  EXPECT_EQ(errors["doomed"], RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(ErrName(errors["never-was"]), "UNKNOWN_TOPIC_OR_PART");
  EXPECT_EQ(admin.PartitionCount("doomed"), -1);
  EXPECT_FALSE(broker->Offsets("doomed", 0).ok());

  // Right after, the same name is a new, empty topic with its own configs.
  Outcome again = admin.CreateTopic({"doomed", 1});
  Producer fresh_producer(broker->bootstrap_servers());
  EXPECT_EQ(again.err, RD_KAFKA_RESP_ERR_NO_ERROR) << again.message;
  EXPECT_EQ(admin.PartitionCount("doomed"), 1);
  EXPECT_EQ(admin.Watermarks("doomed", 0), Marks(0, 0));
  Described d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "doomed");
  EXPECT_EQ(Config(d, "retention.ms").value, "-1");
  EXPECT_EQ(fresh_producer.Produce("doomed", 0, "k", "fresh"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  absl::StatusOr<std::vector<LoggedBatch>> log = broker->ReadLog("doomed", 0);
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ(log->front().base_offset, 0);
  EXPECT_EQ(log->front().records.front().value, "fresh");
  // The group's offsets for the old topic went with it; others stay.
  EXPECT_EQ(Committed(bootstrap, "readers", "doomed", 0),
            RD_KAFKA_OFFSET_INVALID);
  EXPECT_EQ(Committed(bootstrap, "readers", "kept", 0), 7);
}

TEST(AdminApiTest, DeletingATopicAnswersTheFetchesParkedOnIt) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("parked", 1).ok());
  RawClient fetcher(broker->port());
  protocol::FetchRequest fetch;
  fetch.max_wait_ms = 600000;  // would outlast the test if never woken
  fetch.min_bytes = 1;
  fetch.topics.push_back({"parked", {{0, -1, 0, -1, 1 << 20, {}}}, {}});
  fetcher.Send(fetch, 4);
  // The fetch waits for data that never comes; deleting the topic must answer
  // it (had the deletion run first, the answer is the same).
  RawClient admin(broker->port());
  protocol::DeleteTopicsRequest del;
  del.topic_names = {"parked"};
  del.timeout_ms = 1000;
  auto deleted = admin.Call<protocol::DeleteTopicsResponse>(del, 1);
  ASSERT_EQ(deleted.topics.size(), 1u);
  EXPECT_EQ(deleted.topics[0].error_code, 0);
  absl::StatusOr<protocol::FetchResponse> response =
      fetcher.Receive<protocol::FetchResponse>(4);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->topics.size(), 1u);
  EXPECT_EQ(
      protocol::ErrorCodeName(response->topics[0].partitions[0].error_code),
      "UNKNOWN_TOPIC_OR_PARTITION");
  // The broker serves on.
  EXPECT_TRUE(broker->CreateTopic("parked", 1).ok());
}

// ---- The versions librdkafka 2.0.2 does not send ----

TEST(AdminApiTest, IncrementalAlterConfigsSetDeleteAppendSubtract) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("inc", 1, {{"segment.ms", "100000"}}).ok());
  Admin admin(broker->bootstrap_servers());
  RawClient raw(broker->port());
  using Req = protocol::IncrementalAlterConfigsRequest;
  auto alter = [&](std::vector<Req::Config> configs, int16_t version,
                   bool validate_only = false, std::string topic = "inc") {
    Req request;
    request.resources.push_back(
        {kTopicResource, topic, std::move(configs), {}});
    request.validate_only = validate_only;
    auto response =
        raw.Call<protocol::IncrementalAlterConfigsResponse>(request, version);
    EXPECT_EQ(response.results.size(), 1u);
    return response.results.empty() ? std::string("no result")
                                    : std::string(protocol::ErrorCodeName(
                                          response.results[0].error_code));
  };
  for (int16_t v : {0, 1}) {
    SCOPED_TRACE(absl::StrCat("v", v));
    EXPECT_EQ(
        alter({{"retention.ms", protocol::kConfigOpSet, "7000", {}},
               {"cleanup.policy", protocol::kConfigOpAppend, "compact", {}}},
              v),
        "NONE");
    Described d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "inc");
    EXPECT_EQ(Config(d, "retention.ms").value, "7000");
    EXPECT_EQ(Config(d, "cleanup.policy").value, "delete,compact");
    EXPECT_EQ(Config(d, "segment.ms").value, "100000") << "others are kept";

    EXPECT_EQ(
        alter({{"cleanup.policy", protocol::kConfigOpSubtract, "delete", {}},
               {"retention.ms", protocol::kConfigOpDelete, std::nullopt, {}}},
              v),
        "NONE");
    d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "inc");
    EXPECT_EQ(Config(d, "cleanup.policy").value, "compact");
    EXPECT_EQ(Config(d, "retention.ms").value, "-1");
    EXPECT_EQ(Config(d, "retention.ms").source,
              RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);

    EXPECT_EQ(alter({{"retention.ms", protocol::kConfigOpAppend, "1", {}}}, v),
              "INVALID_CONFIG");
    EXPECT_EQ(
        alter({{"retention.ms", protocol::kConfigOpSet, std::nullopt, {}}}, v),
        "INVALID_REQUEST");
    EXPECT_EQ(alter({{"retention.ms", protocol::kConfigOpSet, "1", {}},
                     {"retention.ms", protocol::kConfigOpSet, "2", {}}},
                    v),
              "INVALID_REQUEST");
    EXPECT_EQ(alter({{"retention.ms", 9, "1", {}}}, v), "INVALID_REQUEST");
    EXPECT_EQ(alter({{"no.such", protocol::kConfigOpSet, "1", {}}}, v),
              "INVALID_CONFIG");
    EXPECT_EQ(alter({{"retention.ms", protocol::kConfigOpSet, "-7", {}}}, v),
              "INVALID_CONFIG");
    EXPECT_EQ(alter({{"retention.ms", protocol::kConfigOpSet, "1", {}}}, v,
                    false, "absent"),
              "UNKNOWN_TOPIC_OR_PARTITION");
    EXPECT_EQ(alter({{"retention.ms", protocol::kConfigOpSet, "1", {}}}, v,
                    /*validate_only=*/true),
              "NONE");
    d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "inc");
    EXPECT_EQ(Config(d, "retention.ms").value, "-1") << "nothing changed";
    // Back to the start for the next version.
    EXPECT_EQ(
        alter({{"cleanup.policy", protocol::kConfigOpDelete, std::nullopt, {}}},
              v),
        "NONE");
  }

  // Resources: listed twice, broker ones.
  Req request;
  request.resources.push_back({kTopicResource, "inc", {}, {}});
  request.resources.push_back({kTopicResource, "inc", {}, {}});
  request.resources.push_back(
      {4, "1", {{"log.retention.ms", protocol::kConfigOpSet, "1", {}}}, {}});
  request.resources.push_back({4, "1", {}, {}});
  request.resources.push_back({4, "7", {}, {}});
  request.resources.push_back(
      {4, "", {{"num.partitions", protocol::kConfigOpSet, "3", {}}}, {}});
  request.validate_only = true;
  auto response =
      raw.Call<protocol::IncrementalAlterConfigsResponse>(request, 1);
  std::vector<std::string> codes;
  for (const auto& r : response.results)
    codes.emplace_back(protocol::ErrorCodeName(r.error_code));
  // A dynamic broker config (validate_only) is fine; broker 1 listed twice,
  // another broker and a static config are not.
  EXPECT_EQ(codes,
            (std::vector<std::string>{"INVALID_REQUEST", "INVALID_REQUEST",
                                      "INVALID_REQUEST", "INVALID_REQUEST",
                                      "INVALID_REQUEST", "INVALID_REQUEST"}));
  request.resources.erase(request.resources.begin(),
                          request.resources.begin() + 3);
  response = raw.Call<protocol::IncrementalAlterConfigsResponse>(request, 1);
  codes.clear();
  for (const auto& r : response.results)
    codes.emplace_back(protocol::ErrorCodeName(r.error_code));
  EXPECT_EQ(codes, (std::vector<std::string>{"NONE", "INVALID_REQUEST",
                                             "INVALID_REQUEST"}));
}

TEST(AdminApiTest, FlexibleVersionsOfTheAdminApis) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("flex", 1).ok());
  Producer producer(broker->bootstrap_servers());
  producer.ProduceN("flex", 0, 3);
  RawClient raw(broker->port());

  protocol::CreatePartitionsRequest dry_run;
  dry_run.topics.push_back({"flex", 4, std::nullopt, {}});
  dry_run.validate_only = true;
  auto checked = raw.Call<protocol::CreatePartitionsResponse>(dry_run, 2);
  ASSERT_EQ(checked.results.size(), 1u);
  EXPECT_EQ(checked.results[0].error_code, 0);
  EXPECT_FALSE(broker->Offsets("flex", 1).ok()) << "validate_only added one";

  protocol::CreatePartitionsRequest grow;
  grow.topics.push_back({"flex", 2, std::nullopt, {}});
  grow.topics.push_back({"nowhere", 2, std::nullopt, {}});
  auto grown = raw.Call<protocol::CreatePartitionsResponse>(grow, 3);
  ASSERT_EQ(grown.results.size(), 2u);
  EXPECT_EQ(grown.results[0].error_code, 0);
  EXPECT_EQ(protocol::ErrorCodeName(grown.results[1].error_code),
            "UNKNOWN_TOPIC_OR_PARTITION");

  protocol::DeleteRecordsRequest trim;
  trim.topics.push_back({"flex", {{0, 2, {}}, {5, 0, {}}}, {}});
  auto trimmed = raw.Call<protocol::DeleteRecordsResponse>(trim, 2);
  ASSERT_EQ(trimmed.topics.size(), 1u);
  ASSERT_EQ(trimmed.topics[0].partitions.size(), 2u);
  EXPECT_EQ(trimmed.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(trimmed.topics[0].partitions[0].low_watermark, 2);
  EXPECT_EQ(protocol::ErrorCodeName(trimmed.topics[0].partitions[1].error_code),
            "UNKNOWN_TOPIC_OR_PARTITION");
  EXPECT_EQ(broker->Offsets("flex", 0)->log_start_offset, 2);

  protocol::AlterConfigsRequest alter;
  alter.resources.push_back(
      {kTopicResource, "flex", {{"retention.ms", "9000", {}}}, {}});
  alter.resources.push_back(
      {kTopicResource, "flex", {{"retention.ms", std::nullopt, {}}}, {}});
  alter.resources.push_back({4, "", {}, {}});
  alter.resources.push_back({4, "1", {{"num.partitions", "3", {}}}, {}});
  auto altered = raw.Call<protocol::AlterConfigsResponse>(alter, 2);
  std::vector<std::string> codes;
  for (const auto& r : altered.results)
    codes.emplace_back(protocol::ErrorCodeName(r.error_code));
  EXPECT_EQ(codes, (std::vector<std::string>{"NONE", "INVALID_REQUEST", "NONE",
                                             "INVALID_REQUEST"}));

  protocol::DeleteTopicsRequest del;
  del.topic_names = {"flex", "flex", "nowhere"};
  for (int16_t v : {4, 5}) {
    // As Kafka: a name listed twice is answered once, INVALID_REQUEST, and
    // the topic stays.
    auto deleted = raw.Call<protocol::DeleteTopicsResponse>(del, v);
    ASSERT_EQ(deleted.topics.size(), 2u);
    EXPECT_EQ(deleted.topics[0].name, "flex");
    EXPECT_EQ(protocol::ErrorCodeName(deleted.topics[0].error_code),
              "INVALID_REQUEST");
    if (v == 5) {
      EXPECT_TRUE(deleted.topics[0].error_message.has_value());
    }
    EXPECT_EQ(protocol::ErrorCodeName(deleted.topics[1].error_code),
              "UNKNOWN_TOPIC_OR_PARTITION");
  }
  del.topic_names = {"flex"};
  auto deleted = raw.Call<protocol::DeleteTopicsResponse>(del, 5);
  ASSERT_EQ(deleted.topics.size(), 1u);
  EXPECT_EQ(deleted.topics[0].error_code, 0);
}

// ---- Answers held to Apache Kafka 3.9's (tests/conformance) ----

TEST(AdminApiTest, AnswersAsKafkaDoes) {
  auto broker = StartBroker();
  RawClient raw(broker->port());

  // A topic named twice in CreateTopics or CreatePartitions: answered once,
  // INVALID_REQUEST (after the others in CreateTopics), and left alone.
  protocol::CreateTopicsRequest create;
  for (const char* name : {"dup", "other", "dup"})
    create.topics.push_back({name, 1, 1, {}, {}, {}});
  auto created = raw.Call<protocol::CreateTopicsResponse>(create, 4);
  ASSERT_EQ(created.topics.size(), 2u);
  EXPECT_EQ(created.topics[0].name, "other");
  EXPECT_EQ(created.topics[0].error_code, 0);
  EXPECT_EQ(created.topics[1].name, "dup");
  EXPECT_EQ(protocol::ErrorCodeName(created.topics[1].error_code),
            "INVALID_REQUEST");
  EXPECT_FALSE(broker->Offsets("dup", 0).ok());
  protocol::CreatePartitionsRequest grow;
  for (const char* name : {"other", "other"})
    grow.topics.push_back({name, 2, std::nullopt, {}});
  auto grown = raw.Call<protocol::CreatePartitionsResponse>(grow, 2);
  ASSERT_EQ(grown.results.size(), 1u);
  EXPECT_EQ(protocol::ErrorCodeName(grown.results[0].error_code),
            "INVALID_REQUEST");
  EXPECT_FALSE(broker->Offsets("other", 1).ok());

  // Metadata creates an unknown topic but answers it only from the next
  // request on: Kafka's controller creates it after the answer.
  protocol::MetadataRequest metadata;
  metadata.topics.emplace();
  metadata.topics->push_back({"auto", {}});
  auto first = raw.Call<protocol::MetadataResponse>(metadata, 8);
  ASSERT_EQ(first.topics.size(), 1u);
  EXPECT_EQ(protocol::ErrorCodeName(first.topics[0].error_code),
            "UNKNOWN_TOPIC_OR_PARTITION");
  auto second = raw.Call<protocol::MetadataResponse>(metadata, 8);
  ASSERT_EQ(second.topics.size(), 1u);
  EXPECT_EQ(second.topics[0].error_code, 0);
  EXPECT_EQ(second.topics[0].partitions.size(), 1u);

  // Kafka 3.9's newer topic configs are known, their ranges checked.
  EXPECT_TRUE(broker
                  ->CreateTopic("levels", 1,
                                {{"compression.zstd.level", "-5"},
                                 {"compression.gzip.level", "-1"},
                                 {"message.timestamp.before.max.ms", "1000"},
                                 {"remote.log.copy.disable", "true"}})
                  .ok());
  EXPECT_FALSE(
      broker->CreateTopic("gzip0", 1, {{"compression.gzip.level", "0"}}).ok());
  EXPECT_FALSE(
      broker->CreateTopic("lz4", 1, {{"compression.lz4.level", "18"}}).ok());

  // Broker settings at Kafka's defaults are DEFAULT_CONFIG.
  protocol::DescribeConfigsRequest describe;
  describe.resources.push_back(
      {4,
       "1",
       std::vector<std::string>{"num.partitions", "auto.create.topics.enable",
                                "delete.topic.enable", "broker.id"},
       {}});
  auto described = raw.Call<protocol::DescribeConfigsResponse>(describe, 1);
  ASSERT_EQ(described.results.size(), 1u);
  std::map<std::string, std::pair<std::string, int>> configs;
  for (const auto& c : described.results[0].configs)
    configs[c.name] = {c.value.value_or("(null)"), c.config_source};
  using Config = std::pair<std::string, int>;
  EXPECT_EQ(configs["num.partitions"], Config("1", 5));
  EXPECT_EQ(configs["auto.create.topics.enable"], Config("true", 5));
  EXPECT_EQ(configs["delete.topic.enable"], Config("true", 5));
  EXPECT_EQ(configs["broker.id"], Config("1", 4));

  // A consumer's fetch out of range: the partition's offsets are -1 beside
  // the error.
  ASSERT_TRUE(broker->CreateTopic("ranges", 1).ok());
  Producer producer(broker->bootstrap_servers());
  producer.ProduceN("ranges", 0, 3);
  protocol::FetchRequest fetch;
  fetch.topics.push_back({"ranges", {{0, -1, 7, -1, 1 << 20, {}}}, {}});
  auto fetched = raw.Call<protocol::FetchResponse>(fetch, 11);
  ASSERT_EQ(fetched.topics.size(), 1u);
  ASSERT_EQ(fetched.topics[0].partitions.size(), 1u);
  const auto& out_of_range = fetched.topics[0].partitions[0];
  EXPECT_EQ(protocol::ErrorCodeName(out_of_range.error_code),
            "OFFSET_OUT_OF_RANGE");
  EXPECT_EQ(out_of_range.high_watermark, -1);
  EXPECT_EQ(out_of_range.log_start_offset, -1);

  // ListOffsets v0: the log's segment offsets, newest first (the log end,
  // then the first segment's), none last written before a 1970 timestamp.
  protocol::ListOffsetsRequest legacy;
  legacy.topics.push_back(
      {"ranges",
       {{0, -1, protocol::kListOffsetsLatest, 10, {}}, {0, -1, 1500, 10, {}}},
       {}});
  auto listed = raw.Call<protocol::ListOffsetsResponse>(legacy, 0);
  ASSERT_EQ(listed.topics.size(), 1u);
  ASSERT_EQ(listed.topics[0].partitions.size(), 2u);
  EXPECT_EQ(listed.topics[0].partitions[0].old_style_offsets,
            (std::vector<int64_t>{3, 0}));
  EXPECT_TRUE(listed.topics[0].partitions[1].old_style_offsets.empty());
}

// ---- Persistence ----

TEST(AdminApiTest, EveryAdminChangeSurvivesRestartsWithADataDir) {
  TempDir dir;
  BrokerOptions options;
  options.data_dir = dir.path();
  auto broker = StartBroker(options);
  {
    Admin admin(broker->bootstrap_servers());
    ASSERT_EQ(admin
                  .CreateTopic({"durable",
                                2,
                                1,
                                {{"retention.ms", "86400000"},
                                 {"max.message.bytes", "2048"}}})
                  .err,
              RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(admin.CreateTopic({"gone", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(admin.CreateTopic({"reborn", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
    Producer producer(broker->bootstrap_servers());
    producer.ProduceN("durable", 0, 8);
    producer.ProduceN("gone", 0, 3);
    producer.ProduceN("reborn", 0, 4, "old");
    ASSERT_EQ(
        CommitOffsets(broker->bootstrap_servers(), "g", "reborn", {{0, 4}}),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(
        CommitOffsets(broker->bootstrap_servers(), "g", "durable", {{0, 6}}),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(admin.CreatePartitions("durable", 3).err,
              RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(admin
                  .AlterTopicConfigs("durable", {{"max.message.bytes", "4096"},
                                                 {"cleanup.policy", "delete"}})
                  .err,
              RD_KAFKA_RESP_ERR_NO_ERROR);
    std::vector<DeletedRecords> deleted =
        admin.DeleteRecords("durable", {{0, 5}});
    ASSERT_EQ(deleted.size(), 1u);
    ASSERT_EQ(deleted[0].err, RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(admin.DeleteTopics({"gone", "reborn"}).size(), 2u);
    ASSERT_EQ(admin.CreateTopic({"reborn", 2}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
    Producer fresh_producer(broker->bootstrap_servers());
    fresh_producer.ProduceN("reborn", 1, 1, "new");
  }
  for (auto mode : {Broker::RestartMode::kClean, Broker::RestartMode::kCrash}) {
    ASSERT_TRUE(broker->Restart(mode).ok());
    Admin admin(broker->bootstrap_servers());
    EXPECT_EQ(admin.PartitionCount("durable"), 3);
    EXPECT_EQ(admin.PartitionCount("gone"), -1);
    EXPECT_EQ(admin.PartitionCount("reborn"), 2);
    Described d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "durable");
    EXPECT_EQ(Config(d, "max.message.bytes").value, "4096");
    EXPECT_EQ(Config(d, "cleanup.policy").source,
              RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    EXPECT_EQ(Config(d, "retention.ms").value, "-1")
        << "AlterConfigs dropped it";
    EXPECT_EQ(admin.Watermarks("durable", 0), Marks(5, 8));
    EXPECT_EQ(admin.Watermarks("durable", 2), Marks(0, 0));
    EXPECT_EQ(admin.Watermarks("reborn", 0), Marks(0, 0));
    absl::StatusOr<std::vector<LoggedBatch>> reborn =
        broker->ReadLog("reborn", 1);
    ASSERT_TRUE(reborn.ok());
    ASSERT_EQ(reborn->size(), 1u);
    EXPECT_EQ(reborn->front().records.front().value, "new0");
    EXPECT_TRUE(broker->ReadLog("reborn", 0)->empty());
    EXPECT_EQ(Committed(broker->bootstrap_servers(), "g", "reborn", 0),
              RD_KAFKA_OFFSET_INVALID);
    EXPECT_EQ(Committed(broker->bootstrap_servers(), "g", "durable", 0), 6);
    // The honored config still applies.
    Producer producer(broker->bootstrap_servers());
    EXPECT_EQ(
        ErrName(producer.Produce("durable", 1, "k", std::string(5000, 'x'))),
        "MSG_SIZE_TOO_LARGE");
  }
}

// ---- Dynamic broker configs (KIP-226) ----

// IncrementalAlterConfigs on a BROKER resource, raw (librdkafka 2.0.2 has
// no IncrementalAlterConfigs): the error code of the one resource.
std::string AlterBrokerIncrementally(
    RawClient& raw, const std::string& name,
    std::vector<protocol::IncrementalAlterConfigsRequest::Config> configs,
    bool validate_only = false) {
  protocol::IncrementalAlterConfigsRequest request;
  request.resources.push_back({4, name, std::move(configs), {}});
  request.validate_only = validate_only;
  auto response =
      raw.Call<protocol::IncrementalAlterConfigsResponse>(request, 1);
  EXPECT_EQ(response.results.size(), 1u);
  return response.results.empty() ? std::string("no result")
                                  : std::string(protocol::ErrorCodeName(
                                        response.results[0].error_code));
}

// The legacy AlterConfigs on a BROKER resource, raw (librdkafka cannot name
// the cluster-wide default, whose name is empty): the error code.
std::string AlterBrokerLegacy(RawClient& raw, const std::string& name,
                              const std::map<std::string, std::string>& configs,
                              bool validate_only = false) {
  protocol::AlterConfigsRequest request;
  auto& resource = request.resources.emplace_back();
  resource.resource_type = 4;
  resource.resource_name = name;
  for (const auto& [k, v] : configs) resource.configs.push_back({k, v, {}});
  request.validate_only = validate_only;
  auto response = raw.Call<protocol::AlterConfigsResponse>(request, 1);
  EXPECT_EQ(response.results.size(), 1u);
  return response.results.empty() ? std::string("no result")
                                  : std::string(protocol::ErrorCodeName(
                                        response.results[0].error_code));
}

// DescribeConfigs v1 with synonyms, raw: config name -> its entry.
std::map<std::string, protocol::DescribeConfigsResponse::Config>
DescribeWithSynonyms(RawClient& raw, int8_t type, const std::string& name,
                     std::vector<std::string> keys) {
  protocol::DescribeConfigsRequest request;
  request.resources.push_back({type, name, std::move(keys), {}});
  request.include_synonyms = true;
  auto response = raw.Call<protocol::DescribeConfigsResponse>(request, 1);
  std::map<std::string, protocol::DescribeConfigsResponse::Config> out;
  EXPECT_EQ(response.results.size(), 1u);
  if (response.results.empty()) return out;
  EXPECT_EQ(response.results[0].error_code, 0);
  for (const auto& c : response.results[0].configs) out[c.name] = c;
  return out;
}

// (name, value, source) of each synonym, in order.
std::vector<std::tuple<std::string, std::string, int>> Synonyms(
    const protocol::DescribeConfigsResponse::Config& c) {
  std::vector<std::tuple<std::string, std::string, int>> out;
  for (const auto& s : c.synonyms)
    out.emplace_back(s.name, s.value.value_or("<null>"), s.source);
  return out;
}

constexpr int kDynamicBroker = 2;
constexpr int kDynamicDefault = 3;
constexpr int kDefault = 5;

TEST(AdminApiTest, DynamicMessageMaxBytesAppliesToTopicsWithoutOverride) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  RawClient raw(broker->port());
  ASSERT_EQ(admin.CreateTopic({"plain", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(
      admin.CreateTopic({"own", 1, 1, {{"max.message.bytes", "100000"}}}).err,
      RD_KAFKA_RESP_ERR_NO_ERROR);
  Producer producer(broker->bootstrap_servers());
  const std::string big(3000, 'x');
  ASSERT_EQ(producer.Produce("plain", 0, "k", big), RD_KAFKA_RESP_ERR_NO_ERROR);

  // The cluster-wide default.
  ASSERT_EQ(AlterBrokerLegacy(raw, "", {{"message.max.bytes", "2048"}}),
            "NONE");
  EXPECT_EQ(ErrName(producer.Produce("plain", 0, "k", big)),
            "MSG_SIZE_TOO_LARGE")
      << "the dynamic default applies at once";
  EXPECT_EQ(producer.Produce("own", 0, "k", big), RD_KAFKA_RESP_ERR_NO_ERROR)
      << "the topic's override wins";
  auto topic =
      DescribeWithSynonyms(raw, kTopicResource, "plain", {"max.message.bytes"});
  EXPECT_EQ(topic["max.message.bytes"].value, "2048");
  EXPECT_EQ(topic["max.message.bytes"].config_source, kDynamicDefault);
  EXPECT_EQ(Synonyms(topic["max.message.bytes"]),
            (std::vector<std::tuple<std::string, std::string, int>>{
                {"message.max.bytes", "2048", kDynamicDefault},
                {"message.max.bytes", "1048588", kDefault}}));

  // This broker's own value wins over the cluster-wide default.
  EXPECT_EQ(AlterBrokerIncrementally(
                raw, "1",
                {{"message.max.bytes", protocol::kConfigOpSet, "10000", {}}}),
            "NONE");
  EXPECT_EQ(producer.Produce("plain", 0, "k", big), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto b = DescribeWithSynonyms(raw, 4, "1", {"message.max.bytes"});
  EXPECT_EQ(b["message.max.bytes"].value, "10000");
  EXPECT_EQ(b["message.max.bytes"].config_source, kDynamicBroker);
  EXPECT_FALSE(b["message.max.bytes"].read_only);
  EXPECT_EQ(Synonyms(b["message.max.bytes"]),
            (std::vector<std::tuple<std::string, std::string, int>>{
                {"message.max.bytes", "10000", kDynamicBroker},
                {"message.max.bytes", "2048", kDynamicDefault},
                {"message.max.bytes", "1048588", kDefault}}));
  // The default resource lists what is set there, without the broker's own.
  auto d = DescribeWithSynonyms(raw, 4, "", {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d["message.max.bytes"].value, "2048");
  EXPECT_EQ(d["message.max.bytes"].config_source, kDynamicDefault);

  // DELETE goes back to the layer below: the cluster-wide default, then the
  // default.
  EXPECT_EQ(
      AlterBrokerIncrementally(
          raw, "1", {{"message.max.bytes", protocol::kConfigOpDelete, {}, {}}}),
      "NONE");
  EXPECT_EQ(ErrName(producer.Produce("plain", 0, "k", big)),
            "MSG_SIZE_TOO_LARGE");
  EXPECT_EQ(
      AlterBrokerIncrementally(
          raw, "", {{"message.max.bytes", protocol::kConfigOpDelete, {}, {}}}),
      "NONE");
  EXPECT_EQ(producer.Produce("plain", 0, "k", big), RD_KAFKA_RESP_ERR_NO_ERROR);
  topic =
      DescribeWithSynonyms(raw, kTopicResource, "plain", {"max.message.bytes"});
  EXPECT_EQ(topic["max.message.bytes"].value, "1048588");
  EXPECT_EQ(topic["max.message.bytes"].config_source, kDefault);
  EXPECT_TRUE(DescribeWithSynonyms(raw, 4, "", {}).empty());
}

TEST(AdminApiTest, DynamicRetentionDeletesOldRecordsOfTopicsWithoutOverride) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  RawClient raw(broker->port());
  ASSERT_EQ(admin.CreateTopic({"aging", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(admin.CreateTopic({"keeps", 1, 1, {{"retention.bytes", "-1"}}}).err,
            RD_KAFKA_RESP_ERR_NO_ERROR);
  Producer producer(broker->bootstrap_servers());
  producer.ProduceN("aging", 0, 5);
  producer.ProduceN("keeps", 0, 5);
  ASSERT_EQ(admin.Watermarks("aging", 0), Marks(0, 5));

  // validate_only changes nothing.
  EXPECT_EQ(
      AlterBrokerIncrementally(
          raw, "", {{"log.retention.bytes", protocol::kConfigOpSet, "1", {}}},
          /*validate_only=*/true),
      "NONE");
  EXPECT_EQ(admin.Watermarks("aging", 0), Marks(0, 5));
  // log.retention.bytes=1: the old batches go at once (as retention.bytes=1
  // on the topic would).
  EXPECT_EQ(
      AlterBrokerIncrementally(
          raw, "", {{"log.retention.bytes", protocol::kConfigOpSet, "1", {}}}),
      "NONE");
  const std::pair<int64_t, int64_t> aged = admin.Watermarks("aging", 0);
  EXPECT_GE(aged.first, 4);
  EXPECT_EQ(aged.second, 5);
  EXPECT_EQ(admin.Watermarks("keeps", 0), Marks(0, 5))
      << "the topic's own retention.bytes wins";
}

TEST(AdminApiTest, DynamicBrokerConfigsRefuseWhatKafkaRefuses) {
  auto broker = StartBroker();
  Admin admin(broker->bootstrap_servers());
  RawClient raw(broker->port());
  auto set = [&](const std::string& name, const std::string& key,
                 const std::string& value) {
    return AlterBrokerIncrementally(raw, name,
                                    {{key, protocol::kConfigOpSet, value, {}}});
  };
  // Static settings, a bad value, a per-broker setting on the default, an
  // SSL setting without a listener, another broker: INVALID_REQUEST.
  EXPECT_EQ(set("1", "broker.id", "2"), "INVALID_REQUEST");
  EXPECT_EQ(set("", "log.dirs", "/x"), "INVALID_REQUEST");
  EXPECT_EQ(set("", "num.partitions", "3"), "INVALID_REQUEST");
  EXPECT_EQ(set("", "log.retention.ms", "soon"), "INVALID_REQUEST");
  EXPECT_EQ(set("", "log.segment.bytes", "3"), "INVALID_REQUEST");
  EXPECT_EQ(set("", "num.io.threads", "100"), "INVALID_REQUEST");
  EXPECT_EQ(set("", "listener.name.plaintext.ssl.keystore.location", "/k"),
            "INVALID_REQUEST");
  EXPECT_EQ(set("1", "ssl.keystore.location", "/k"), "INVALID_REQUEST");
  EXPECT_EQ(set("2", "log.retention.ms", "1000"), "INVALID_REQUEST");
  EXPECT_EQ(set("one", "log.retention.ms", "1000"), "INVALID_REQUEST");
  // APPEND on a non-list config: INVALID_CONFIG (as for a topic).
  EXPECT_EQ(
      AlterBrokerIncrementally(
          raw, "", {{"message.max.bytes", protocol::kConfigOpAppend, "1", {}}}),
      "INVALID_CONFIG");
  EXPECT_TRUE(DescribeWithSynonyms(raw, 4, "", {}).empty())
      << "nothing refused was kept";

  // Accepted: a listener setting on the broker itself, an unknown name,
  // thread counts (stored only), APPEND to a list config.
  EXPECT_EQ(set("1", "listener.name.plaintext.ssl.keystore.location", "/k"),
            "NONE");
  EXPECT_EQ(set("", "no.such.config", "x"), "NONE");
  EXPECT_EQ(set("", "num.io.threads", "12"), "NONE");
  EXPECT_EQ(
      AlterBrokerIncrementally(
          raw, "",
          {{"log.cleanup.policy", protocol::kConfigOpAppend, "compact", {}}}),
      "NONE");
  auto d = DescribeWithSynonyms(raw, 4, "", {});
  EXPECT_EQ(d["no.such.config"].value, "x");
  EXPECT_EQ(d["num.io.threads"].value, "12");
  EXPECT_EQ(d["log.cleanup.policy"].value, "delete,compact");
  EXPECT_EQ(d.count("listener.name.plaintext.ssl.keystore.location"), 0u);
  auto mine = DescribeWithSynonyms(raw, 4, "1", {});
  EXPECT_EQ(mine["listener.name.plaintext.ssl.keystore.location"].config_source,
            kDynamicBroker);
  EXPECT_TRUE(mine["broker.id"].read_only);
  EXPECT_FALSE(mine["num.io.threads"].read_only);
  // A topic inherits the cleanup policy.
  ASSERT_EQ(admin.CreateTopic({"later", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
  Described topic = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "later");
  EXPECT_EQ(Config(topic, "cleanup.policy").value, "delete,compact");

  // The legacy AlterConfigs replaces the whole set of the resource.
  ASSERT_EQ(AlterBrokerLegacy(raw, "", {{"log.retention.ms", "3600000"}}),
            "NONE");
  d = DescribeWithSynonyms(raw, 4, "", {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d["log.retention.ms"].value, "3600000");
  EXPECT_EQ(
      AlterBrokerLegacy(raw, "", {{"auto.create.topics.enable", "false"}}),
      "INVALID_REQUEST");
  // librdkafka's AlterConfigs on this broker's own resource.
  Outcome own = admin.AlterConfigs(RD_KAFKA_RESOURCE_BROKER, "1",
                                   {{"log.retention.ms", "7200000"}});
  EXPECT_EQ(own.err, RD_KAFKA_RESP_ERR_NO_ERROR) << own.message;
  EXPECT_EQ(ErrName(admin
                        .AlterConfigs(RD_KAFKA_RESOURCE_BROKER, "1",
                                      {{"log.dirs", "/elsewhere"}})
                        .err),
            "INVALID_REQUEST");
  topic = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "later");
  EXPECT_EQ(Config(topic, "cleanup.policy").value, "delete");
  EXPECT_EQ(Config(topic, "retention.ms").value, "7200000");
  EXPECT_EQ(Config(topic, "retention.ms").source,
            RD_KAFKA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG);
}

TEST(AdminApiTest, DynamicBrokerConfigsSurviveARestartWithADataDir) {
  TempDir dir;
  BrokerOptions options;
  options.data_dir = dir.path();
  auto broker = StartBroker(options);
  {
    Admin admin(broker->bootstrap_servers());
    ASSERT_EQ(admin.CreateTopic({"t", 1}).err, RD_KAFKA_RESP_ERR_NO_ERROR);
    RawClient raw(broker->port());
    ASSERT_EQ(AlterBrokerLegacy(raw, "", {{"message.max.bytes", "2048"}}),
              "NONE");
    ASSERT_EQ(admin
                  .AlterConfigs(RD_KAFKA_RESOURCE_BROKER, "1",
                                {{"log.retention.ms", "7200000"}})
                  .err,
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  for (auto mode : {Broker::RestartMode::kClean, Broker::RestartMode::kCrash}) {
    ASSERT_TRUE(broker->Restart(mode).ok());
    RawClient raw(broker->port());
    auto t = DescribeWithSynonyms(raw, kTopicResource, "t",
                                  {"max.message.bytes", "retention.ms"});
    EXPECT_EQ(t["max.message.bytes"].value, "2048");
    EXPECT_EQ(t["max.message.bytes"].config_source, kDynamicDefault);
    EXPECT_EQ(t["retention.ms"].value, "7200000");
    EXPECT_EQ(t["retention.ms"].config_source, kDynamicBroker);
    Producer producer(broker->bootstrap_servers());
    EXPECT_EQ(ErrName(producer.Produce("t", 0, "k", std::string(3000, 'x'))),
              "MSG_SIZE_TOO_LARGE");
  }
}

// ---- The program users run ----

// librdkafka's Admin API against the exactly-broker binary (not the embedded
// class): every admin call of a test suite's fixture, each result checked,
// then a SIGTERM and a restart on the same data dir.
TEST(AdminApiBinaryTest, LibrdkafkaAdminAgainstTheBinaryAndAcrossARestart) {
  TempDir dir;
  const std::vector<std::string> args = {"--data-dir", dir.path(),
                                         "--no-auto-create-topics"};
  {
    testing::BrokerProcess broker(EXACTLY_BROKER_BIN, args);
    ASSERT_TRUE(broker.running()) << broker.error();
    Admin admin(broker.bootstrap_servers());
    ASSERT_EQ(admin
                  .CreateTopic({"events",
                                2,
                                1,
                                {{"retention.ms", "86400000"},
                                 {"max.message.bytes", "2048"}}})
                  .err,
              RD_KAFKA_RESP_ERR_NO_ERROR);
    EXPECT_EQ(admin.PartitionCount("events"), 2);
    // Kafka's errors for a single broker and bad names.
    EXPECT_EQ(ErrName(admin.CreateTopic({"events", 1}).err),
              "TOPIC_ALREADY_EXISTS");
    EXPECT_EQ(ErrName(admin.CreateTopic({"three-replicas", 1, 3}).err),
              "INVALID_REPLICATION_FACTOR");
    EXPECT_EQ(ErrName(admin.CreateTopic({"bad name!", 1}).err),
              "TOPIC_EXCEPTION");
    EXPECT_EQ(ErrName(admin.CreateTopic({"x", 1, 1, {{"no.such", "1"}}}).err),
              "INVALID_CONFIG");

    Described d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "events");
    ASSERT_EQ(d.err, RD_KAFKA_RESP_ERR_NO_ERROR) << d.message;
    EXPECT_EQ(Config(d, "max.message.bytes").value, "2048");
    EXPECT_EQ(Config(d, "retention.ms").value, "86400000");

    // The altered limit is honoured at once.
    ASSERT_EQ(
        admin.AlterTopicConfigs("events", {{"max.message.bytes", "4096"}}).err,
        RD_KAFKA_RESP_ERR_NO_ERROR);
    Producer producer(broker.bootstrap_servers());
    EXPECT_EQ(producer.Produce("events", 0, "k", std::string(3000, 'x')),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    EXPECT_EQ(
        ErrName(producer.Produce("events", 0, "k", std::string(5000, 'x'))),
        "MSG_SIZE_TOO_LARGE");
    producer.ProduceN("events", 0, 9);  // offsets 1..9

    ASSERT_EQ(admin.CreatePartitions("events", 4).err,
              RD_KAFKA_RESP_ERR_NO_ERROR);
    EXPECT_EQ(admin.PartitionCount("events"), 4);
    std::vector<DeletedRecords> deleted =
        admin.DeleteRecords("events", {{0, 4}});
    ASSERT_EQ(deleted.size(), 1u);
    EXPECT_EQ(deleted[0].err, RD_KAFKA_RESP_ERR_NO_ERROR);
    EXPECT_EQ(admin.Watermarks("events", 0), Marks(4, 10));

    ASSERT_EQ(admin.CreateTopic({"scratch", 1}).err,
              RD_KAFKA_RESP_ERR_NO_ERROR);
    producer.ProduceN("scratch", 0, 3);
    std::vector<Outcome> dropped = admin.DeleteTopics({"scratch"});
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0].err, RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(admin.CreateTopic({"scratch", 3}).err,
              RD_KAFKA_RESP_ERR_NO_ERROR);
    EXPECT_EQ(admin.PartitionCount("scratch"), 3);
    EXPECT_EQ(admin.Watermarks("scratch", 0), Marks(0, 0));
    EXPECT_TRUE(broker.Stop()) << "SIGTERM must stop the broker cleanly";
  }
  testing::BrokerProcess broker(EXACTLY_BROKER_BIN, args);
  ASSERT_TRUE(broker.running()) << broker.error();
  Admin admin(broker.bootstrap_servers());
  EXPECT_EQ(admin.PartitionCount("events"), 4);
  EXPECT_EQ(admin.PartitionCount("scratch"), 3);
  EXPECT_EQ(admin.Watermarks("events", 0), Marks(4, 10));
  EXPECT_EQ(admin.Watermarks("scratch", 0), Marks(0, 0));
  Described d = admin.DescribeConfigs(RD_KAFKA_RESOURCE_TOPIC, "events");
  EXPECT_EQ(Config(d, "max.message.bytes").value, "4096");
}

}  // namespace
}  // namespace exactly::broker
