// __transaction_state is laid out as Kafka lays it out (issue 20): a
// transaction is committed, then the records of its transactional id are read
// back from the id's partition of __transaction_state and decoded with the
// bundled broker's own codec (txn/transaction_log.h). The same test runs
// against Apache Kafka (the kafka labels), where Kafka wrote the records, and
// against a 3-broker bundled cluster (the cluster3 label, or one started in
// this process when the test has no external cluster: a single bundled
// broker keeps this state in its store instead, there is no such topic).
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/coordinator_placement.h"
#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "support/test_cluster.h"
#include "txn/transaction_log.h"

namespace exactly {
namespace {

using broker::TxnMetadata;
using broker::TxnState;

struct Client {
  rd_kafka_t* rk = nullptr;
  ~Client() {
    if (rk != nullptr) rd_kafka_destroy(rk);
  }
};

rd_kafka_t* NewRdKafka(rd_kafka_type_t type,
                       std::vector<std::pair<std::string, std::string>> props) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      ADD_FAILURE() << k << ": " << err;
      rd_kafka_conf_destroy(conf);
      return nullptr;
    }
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) ADD_FAILURE() << err;
  return rk;
}

bool Ok(rd_kafka_error_t* e, const char* what) {
  if (e == nullptr) return true;
  ADD_FAILURE() << what << ": " << rd_kafka_error_string(e);
  rd_kafka_error_destroy(e);
  return false;
}

// Every state the records of `id` in `bootstrap`'s __transaction_state hold,
// in log order; waits until one is `last`.
std::vector<TxnMetadata> StatesOf(const std::string& bootstrap,
                                  const std::string& id, TxnState last) {
  Client c;
  c.rk = NewRdKafka(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                        {"group.id", "exactly-txn-log-reader"},
                                        {"enable.auto.commit", "false"},
                                        {"enable.partition.eof", "false"}});
  if (c.rk == nullptr) return {};
  // The topic's partition count is the broker's setting (the Kafka harness
  // runs 5, the bundled broker Kafka's default 50).
  int32_t partitions = 0;
  {
    rd_kafka_topic_t* t =
        rd_kafka_topic_new(c.rk, "__transaction_state", nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    EXPECT_EQ(rd_kafka_metadata(c.rk, 0, t, &md, 10000),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    if (md != nullptr && md->topic_cnt == 1)
      partitions = md->topics[0].partition_cnt;
    if (md != nullptr) rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(t);
  }
  if (partitions <= 0) {
    ADD_FAILURE() << "no __transaction_state partitions";
    return {};
  }
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(
      parts, "__transaction_state",
      broker::CoordinatorPartition(id, partitions))
      ->offset = RD_KAFKA_OFFSET_BEGINNING;
  EXPECT_EQ(rd_kafka_assign(c.rk, parts), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(parts);
  std::vector<TxnMetadata> states;
  int read = 0;
  std::string errors;
  // The partition holds the records of every transactional id hashed to it
  // (on a shared cluster, many): read until this id's last state, within a
  // generous deadline.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c.rk, 100);
    if (m == nullptr) continue;
    ++read;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR && errors.size() < 500)
      errors += std::string(rd_kafka_message_errstr(m)) + "; ";
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->key != nullptr) {
      absl::StatusOr<std::string> key = broker::DecodeTransactionLogKey(
          {static_cast<const char*>(m->key), m->key_len});
      EXPECT_TRUE(key.ok()) << key.status();
      if (key.ok() && *key == id && m->payload != nullptr) {
        absl::StatusOr<TxnMetadata> state = broker::DecodeTransactionLogValue(
            id, {static_cast<const char*>(m->payload), m->len});
        EXPECT_TRUE(state.ok()) << state.status();
        if (state.ok()) states.push_back(*state);
      }
    }
    rd_kafka_message_destroy(m);
    if (!states.empty() && states.back().state == last) break;
  }
  rd_kafka_consumer_close(c.rk);
  if (states.empty()) {
    ADD_FAILURE() << "partition "
                  << broker::CoordinatorPartition(id, partitions) << " of "
                  << partitions << ": " << read
                  << " message(s) read; errors: " << errors;
  }
  return states;
}

TEST(TransactionStateLogTest, TheCommitsRecordsDecodeWithTheBrokersCodec) {
  auto cluster = testing::TestCluster::Start();
  std::string bootstrap = cluster->bootstrap_servers();
  std::unique_ptr<broker::Cluster> own;
  if (cluster->broker() != nullptr) {
    auto started = broker::Cluster::Start({.brokers = 3});
    ASSERT_TRUE(started.ok()) << started.status();
    own = std::move(*started);
    bootstrap = own->bootstrap_servers();
  }
  if (!cluster->has_transactions()) GTEST_SKIP() << "no transactions here";
  const std::string topic = testing::TestCluster::UniqueName("txn-log");
  if (own != nullptr) {
    ASSERT_TRUE(own->CreateTopic(topic, 2).ok());
  } else {
    ASSERT_TRUE(cluster->CreateTopic(topic, 2).ok());
  }
  const std::string id = testing::TestCluster::UniqueName("txn-log-writer");

  Client p;
  p.rk = NewRdKafka(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                        {"transactional.id", id},
                                        {"transaction.timeout.ms", "30000"}});
  ASSERT_NE(p.rk, nullptr);
  ASSERT_TRUE(Ok(rd_kafka_init_transactions(p.rk, 60000), "init"));
  ASSERT_TRUE(Ok(rd_kafka_begin_transaction(p.rk), "begin"));
  for (int32_t partition = 0; partition < 2; ++partition) {
    ASSERT_EQ(rd_kafka_producev(p.rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                                RD_KAFKA_V_PARTITION(partition),
                                RD_KAFKA_V_VALUE(const_cast<char*>("v"), 1),
                                RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ASSERT_TRUE(Ok(rd_kafka_commit_transaction(p.rk, 60000), "commit"));

  std::vector<TxnMetadata> states =
      StatesOf(bootstrap, id, TxnState::kCompleteCommit);
  ASSERT_FALSE(states.empty()) << "no record of " << id;
  // InitProducerId (Empty), AddPartitionsToTxn (Ongoing), EndTxn
  // (PrepareCommit), markers written (CompleteCommit): Kafka's sequence.
  std::vector<TxnState> sequence;
  for (const TxnMetadata& s : states) {
    if (sequence.empty() || sequence.back() != s.state)
      sequence.push_back(s.state);
  }
  EXPECT_EQ(sequence,
            (std::vector<TxnState>{TxnState::kEmpty, TxnState::kOngoing,
                                   TxnState::kPrepareCommit,
                                   TxnState::kCompleteCommit}));
  for (const TxnMetadata& s : states) {
    EXPECT_EQ(s.producer_id, states.front().producer_id);
    EXPECT_EQ(s.timeout_ms, 30000);
    if (s.state == TxnState::kPrepareCommit) {
      EXPECT_EQ(s.partitions, (std::set<std::pair<std::string, int32_t>>{
                                  {topic, 0}, {topic, 1}}));
    }
    if (s.state == TxnState::kCompleteCommit) {
      EXPECT_TRUE(s.partitions.empty());
    }
  }
}

}  // namespace
}  // namespace exactly
