// __consumer_offsets is laid out as Kafka lays it out (issue 20): a consumer
// group commits an offset and a transactional producer commits another
// group's offset (TxnOffsetCommit), then the groups' partitions of
// __consumer_offsets are read back raw and decoded with the bundled broker's
// own codec (group/offsets_log.h). The same test runs against Apache Kafka
// (the kafka labels), where Kafka wrote the records, and against a 3-broker
// bundled cluster (the cluster3 label, or one started in this process when the
// test has no external cluster). Until the bundled group coordinator keeps
// its state in __consumer_offsets, the bundled runs fail: Metadata knows no
// such topic.
//
// librdkafka hides what matters here (batch attributes, producer ids, control
// records), so the partitions are read with Fetch v11 (read_uncommitted) on a
// raw connection to each partition's leader, found through librdkafka's
// Metadata. Checked:
//   - group G: a non-transactional batch holds G's offset record for
//     (topic, 0) with the committed offset N; a GroupMetadata record of G has
//     protocol type "consumer", protocol "range", 1 member, who leads;
//   - group G2: a transactional batch of the producer P holds G2's offset
//     record for (topic, 0) with offset M, and a COMMIT control batch of P
//     follows it;
//   - Kafka's records of G and G2 are the versions the codec writes: the
//     offset records' keys and values byte for byte (key v1, value v3), the
//     group record's key v2 and value v3; the offset records' batches have
//     base sequence 0 (and a producer id only when transactional);
//   - every offset or group record of G and G2 decodes (records of other
//     groups sharing the partitions are only replayed: Kafka 4's records of
//     other kinds are counted as skipped, not failed);
//   - replaying the batches read (ReplayOffsetsLog over a PartitionLog holding
//     them, in Kafka's order) yields G's offset N and record, and G2's offset
//     M committed with nothing pending.
// Not checked: timestamps, the GroupMetadata value byte for byte (its current
// state timestamp is not kept by the codec), and record kinds beyond the
// classic group's (Kafka 4's consumer-group records).
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/coordinator_placement.h"
#include "exactly/broker/cluster.h"
#include "group/offsets_log.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "support/kafka_client.h"
#include "support/raw_connection.h"
#include "support/test_cluster.h"

namespace exactly {
namespace {

using broker::LoadedGroup;
using broker::OffsetsLogKey;
using testing::NewClient;
using testing::RdKafkaPtr;

constexpr const char* kOffsetsTopic = "__consumer_offsets";

bool Ok(rd_kafka_error_t* e, const char* what) {
  if (e == nullptr) return true;
  ADD_FAILURE() << what << ": " << rd_kafka_error_string(e);
  rd_kafka_error_destroy(e);
  return false;
}

// The partition count of __consumer_offsets and, per partition, its leader's
// port; empty when Metadata does not know the topic.
struct OffsetsTopic {
  int32_t partitions = 0;
  std::map<int32_t, int> leader_port;
};

OffsetsTopic DescribeOffsetsTopic(rd_kafka_t* rk) {
  OffsetsTopic out;
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, kOffsetsTopic, nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, t, &md, 10000);
  EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  if (md != nullptr && md->topic_cnt == 1 &&
      md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.partitions = md->topics[0].partition_cnt;
    for (int i = 0; i < md->topics[0].partition_cnt; ++i) {
      const rd_kafka_metadata_partition_t& p = md->topics[0].partitions[i];
      for (int b = 0; b < md->broker_cnt; ++b) {
        if (md->brokers[b].id == p.leader)
          out.leader_port[p.id] = md->brokers[b].port;
      }
    }
  }
  if (md != nullptr) rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(t);
  return out;
}

// The batches of one partition of __consumer_offsets read so far, as Kafka
// stores them.
struct RawPartition {
  int32_t partition = -1;
  int port = -1;
  int64_t next_offset = 0;
  std::vector<std::string> batches;
  std::string errors;

  // Fetches (Fetch v11, read_uncommitted) from next_offset to the high
  // watermark; returns whether anything new came.
  bool FetchMore() {
    bool got = false;
    for (int round = 0; round < 100; ++round) {
      testing::RawConnection c(static_cast<uint16_t>(port));
      if (!c.connected()) {
        errors = absl::StrCat("cannot connect to port ", port);
        return got;
      }
      protocol::FetchRequest fetch;
      fetch.max_wait_ms = 0;
      fetch.isolation_level = 0;
      fetch.topics.push_back(
          {kOffsetsTopic, {{partition, -1, next_offset, -1, 1 << 20, {}}}, {}});
      protocol::RequestHeader h;
      h.api_key = static_cast<int16_t>(protocol::ApiKey::kFetch);
      h.api_version = 11;
      h.correlation_id = 1;
      h.client_id = "consumer-offsets-log-test";
      if (!c.Send(protocol::EncodeRequestFrame(h, fetch))) {
        errors = "send failed";
        return got;
      }
      std::optional<std::string> frame = c.ReadFrame(10000);  // kept alive
      if (!frame) {
        errors = "no Fetch response";
        return got;
      }
      std::string_view body = *frame;
      if (!protocol::ParseResponseHeader(protocol::ApiKey::kFetch, 11, &body)
               .ok()) {
        errors = "bad response header";
        return got;
      }
      absl::StatusOr<protocol::FetchResponse> response =
          protocol::DecodeMessage<protocol::FetchResponse>(body, 11);
      if (!response.ok() || response->topics.size() != 1 ||
          response->topics[0].partitions.size() != 1) {
        errors = response.ok() ? "unexpected Fetch response"
                               : response.status().ToString();
        return got;
      }
      const protocol::FetchResponse::Partition& p =
          response->topics[0].partitions[0];
      if (p.error_code != 0) {
        errors = absl::StrCat("Fetch error ", p.error_code);
        return got;
      }
      std::string records = p.records.Joined();
      absl::StatusOr<std::vector<protocol::RecordBatchView>> split =
          protocol::SplitBatches(records);
      if (!split.ok()) {
        errors = split.status().ToString();
        return got;
      }
      if (split->empty()) return got;
      for (const protocol::RecordBatchView& b : *split) {
        // A fetch answers from the batch holding next_offset.
        if (b.header.last_offset() < next_offset) continue;
        batches.emplace_back(b.bytes);
        next_offset = b.header.last_offset() + 1;
        got = true;
      }
      if (p.high_watermark >= 0 && next_offset >= p.high_watermark) return got;
    }
    return got;
  }

  void AppendTo(broker::PartitionLog& log) const {
    for (const std::string& batch : batches) {
      broker::SharedBuffer buffer = broker::CopyToSharedBuffer(batch);
      log.Append(buffer, buffer.get(), batch.size(),
                 *protocol::ParseBatchHeader(batch), 0);
    }
  }
};

// What the raw batches of a partition say about the test's two groups.
struct Findings {
  bool g_offset = false;      // G's non-transactional offset record, N
  bool g_group = false;       // G's GroupMetadata with 1 member
  int64_t txn_producer = -1;  // the producer of G2's transactional record, M
  bool g2_committed = false;  // that producer's COMMIT marker after it
  std::vector<std::string> problems;
};

void Inspect(const RawPartition& raw, const std::string& g,
             const std::string& g2, const std::string& topic, int64_t n,
             int64_t m, Findings& f) {
  for (const std::string& bytes : raw.batches) {
    absl::StatusOr<protocol::RecordBatchHeader> h =
        protocol::ParseBatchHeader(bytes);
    if (!h.ok()) {
      f.problems.push_back(h.status().ToString());
      continue;
    }
    const protocol::RecordBatchView view{*h, bytes};
    if (h->is_control()) {
      absl::StatusOr<protocol::ControlType> type =
          protocol::ReadControlType(view);
      if (type.ok() && *type == protocol::ControlType::kCommit &&
          f.txn_producer >= 0 && h->producer_id == f.txn_producer)
        f.g2_committed = true;
      continue;
    }
    absl::StatusOr<std::vector<protocol::Record>> records =
        protocol::DecodeRecords(view);
    if (!records.ok()) {
      f.problems.push_back(records.status().ToString());
      continue;
    }
    for (const protocol::Record& r : *records) {
      if (!r.key) continue;
      absl::StatusOr<OffsetsLogKey> key = broker::DecodeOffsetsLogKey(*r.key);
      if (!key.ok() || (key->group != g && key->group != g2)) continue;
      if (!r.value) continue;  // a tombstone
      if (key->kind == OffsetsLogKey::Kind::kGroup) {
        absl::StatusOr<broker::GroupRecord> record =
            broker::DecodeGroupMetadataValue(key->group, *r.value);
        if (!record.ok()) {
          f.problems.push_back(absl::StrCat("GroupMetadataValue of ",
                                            key->group, ": ",
                                            record.status().ToString()));
          continue;
        }
        // The versions Kafka 3.x writes, which the codec writes too.
        if (*r.key != broker::EncodeGroupMetadataKey(key->group) ||
            r.value->substr(0, 2) != std::string("\0\3", 2)) {
          f.problems.push_back(absl::StrCat("GroupMetadata of ", key->group,
                                            " not in key v2 / value v3"));
        }
        if (key->group == g && record->members.size() == 1 &&
            record->protocol_type == "consumer" &&
            record->protocol_name == "range" &&
            record->leader == record->members[0].id &&
            record->members[0].client_id == "offsets-log-consumer" &&
            record->members[0].session_timeout_ms == 30000 &&
            !record->members[0].assignment.empty())
          f.g_group = true;
        continue;
      }
      absl::StatusOr<broker::OffsetAndMetadata> offset =
          broker::DecodeOffsetCommitValue(*r.value);
      if (!offset.ok()) {
        f.problems.push_back(absl::StrCat("OffsetCommitValue of ", key->group,
                                          ": ", offset.status().ToString()));
        continue;
      }
      if (key->tp != broker::TopicPartition(topic, 0)) continue;
      // Key v1 and value v3, byte for byte as the codec writes them.
      if (*r.key != broker::EncodeOffsetCommitKey(key->group, topic, 0) ||
          *r.value != broker::EncodeOffsetCommitValue(*offset)) {
        f.problems.push_back(absl::StrCat("offset record of ", key->group,
                                          " not as the codec writes it"));
      }
      // Kafka's coordinator builds its batches with base sequence 0, a
      // TxnOffsetCommit's with the producer's id and epoch, a commit's
      // without (BuildOffsetsLogBatch does the same).
      if (h->base_sequence != 0 ||
          h->is_transactional() != (h->producer_id >= 0)) {
        f.problems.push_back(absl::StrCat("batch of ", key->group,
                                          ": producer ", h->producer_id,
                                          ", base sequence ", h->base_sequence,
                                          ", attributes ", h->attributes));
      }
      if (key->group == g && !h->is_transactional() && offset->offset == n)
        f.g_offset = true;
      if (key->group == g2 && h->is_transactional() && h->producer_id >= 0 &&
          offset->offset == m) {
        f.txn_producer = h->producer_id;
        f.g2_committed = false;  // the marker must come after it
      }
    }
  }
}

TEST(ConsumerOffsetsLogTest, CommitsAndTxnOffsetCommitsDecodeWithTheCodec) {
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
  const std::string topic = testing::TestCluster::UniqueName("offsets-log");
  if (own != nullptr) {
    ASSERT_TRUE(own->CreateTopic(topic, 1).ok());
  } else {
    ASSERT_TRUE(cluster->CreateTopic(topic, 1).ok());
  }
  const std::string g = testing::TestCluster::UniqueName("offsets-log-g");
  const std::string g2 = testing::TestCluster::UniqueName("offsets-log-g2");
  constexpr int kMessages = 5;
  constexpr int64_t kN = 4;  // G's commit
  constexpr int64_t kM = 2;  // G2's, by the transaction

  // Something to consume.
  {
    RdKafkaPtr p =
        NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}});
    ASSERT_TRUE(p);
    for (int i = 0; i < kMessages; ++i) {
      ASSERT_EQ(rd_kafka_producev(p.get(), RD_KAFKA_V_TOPIC(topic.c_str()),
                                  RD_KAFKA_V_PARTITION(0),
                                  RD_KAFKA_V_VALUE(const_cast<char*>("v"), 1),
                                  RD_KAFKA_V_END),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // (a) A member of G consumes and commits offset N synchronously. It stays
  // in the group until the log is read, so that G's last GroupMetadata names
  // it.
  RdKafkaPtr consumer =
      NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                    {"group.id", g},
                                    {"client.id", "offsets-log-consumer"},
                                    {"partition.assignment.strategy", "range"},
                                    {"session.timeout.ms", "30000"},
                                    {"auto.offset.reset", "earliest"},
                                    {"enable.auto.commit", "false"},
                                    {"enable.partition.eof", "false"}});
  ASSERT_TRUE(consumer);
  rd_kafka_poll_set_consumer(consumer.get());
  {
    rd_kafka_topic_partition_list_t* sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, topic.c_str(),
                                      RD_KAFKA_PARTITION_UA);
    ASSERT_EQ(rd_kafka_subscribe(consumer.get(), sub),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(sub);
  }
  int consumed = 0;
  const auto consume_deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (consumed < kMessages &&
         std::chrono::steady_clock::now() < consume_deadline) {
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer.get(), 200);
    if (msg == nullptr) continue;
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) ++consumed;
    rd_kafka_message_destroy(msg);
  }
  ASSERT_EQ(consumed, kMessages);
  {
    rd_kafka_topic_partition_list_t* offsets =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(offsets, topic.c_str(), 0)->offset = kN;
    rd_kafka_resp_err_t err = rd_kafka_commit(consumer.get(), offsets, 0);
    rd_kafka_topic_partition_list_destroy(offsets);
    ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  }

  // (b) A transactional producer commits G2's offset M with its transaction.
  {
    RdKafkaPtr p =
        NewClient(RD_KAFKA_PRODUCER,
                  {{"bootstrap.servers", bootstrap},
                   {"transactional.id",
                    testing::TestCluster::UniqueName("offsets-log-writer")},
                   {"transaction.timeout.ms", "30000"}});
    ASSERT_TRUE(p);
    ASSERT_TRUE(Ok(rd_kafka_init_transactions(p.get(), 60000), "init"));
    ASSERT_TRUE(Ok(rd_kafka_begin_transaction(p.get()), "begin"));
    ASSERT_EQ(rd_kafka_producev(p.get(), RD_KAFKA_V_TOPIC(topic.c_str()),
                                RD_KAFKA_V_PARTITION(0),
                                RD_KAFKA_V_VALUE(const_cast<char*>("t"), 1),
                                RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_t* offsets =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(offsets, topic.c_str(), 0)->offset = kM;
    rd_kafka_consumer_group_metadata_t* cgmd =
        rd_kafka_consumer_group_metadata_new(g2.c_str());
    bool sent =
        Ok(rd_kafka_send_offsets_to_transaction(p.get(), offsets, cgmd, 60000),
           "send_offsets_to_transaction");
    rd_kafka_consumer_group_metadata_destroy(cgmd);
    rd_kafka_topic_partition_list_destroy(offsets);
    ASSERT_TRUE(sent);
    ASSERT_TRUE(Ok(rd_kafka_commit_transaction(p.get(), 60000), "commit"));
  }

  // The groups' partitions of __consumer_offsets, its partition count from
  // Metadata (the Kafka harness may run fewer than Kafka's default 50).
  OffsetsTopic offsets_topic = DescribeOffsetsTopic(consumer.get());
  ASSERT_GT(offsets_topic.partitions, 0) << "no __consumer_offsets partitions";
  std::map<int32_t, RawPartition> raw;
  for (const std::string& group : {g, g2}) {
    int32_t p = broker::CoordinatorPartition(group, offsets_topic.partitions);
    ASSERT_TRUE(offsets_topic.leader_port.contains(p))
        << "no leader for __consumer_offsets-" << p;
    raw[p].partition = p;
    raw[p].port = offsets_topic.leader_port.at(p);
  }

  // Kafka writes the transaction's COMMIT marker after EndTxn answers: read
  // until everything is there, within a generous deadline.
  Findings f;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto& [p, r] : raw) r.FetchMore();
    f = Findings{};
    for (const auto& [p, r] : raw) Inspect(r, g, g2, topic, kN, kM, f);
    if (f.g_offset && f.g_group && f.g2_committed) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::string where;
  for (const auto& [p, r] : raw) {
    where += absl::StrCat("partition ", p, " of ", offsets_topic.partitions,
                          ": ", r.batches.size(), " batch(es) read",
                          r.errors.empty() ? "" : ", error: ", r.errors, "; ");
  }
  EXPECT_TRUE(f.g_offset) << "no offset record of " << g << " with " << kN
                          << "; " << where;
  EXPECT_TRUE(f.g_group) << "no GroupMetadata of " << g
                         << " with its 1 member; " << where;
  EXPECT_GE(f.txn_producer, 0) << "no transactional offset record of " << g2
                               << " with " << kM << "; " << where;
  EXPECT_TRUE(f.g2_committed) << "no COMMIT marker after it; " << where;
  for (const std::string& problem : f.problems) ADD_FAILURE() << problem;

  // Replayed, the log yields both groups' committed offsets.
  std::map<std::string, LoadedGroup> loaded;
  for (const auto& [p, r] : raw) {
    broker::PartitionLog log;
    r.AppendTo(log);
    size_t skipped = 0;
    for (auto& [group, state] : broker::ReplayOffsetsLog(log, &skipped))
      loaded[group] = std::move(state);
    if (skipped != 0) {
      std::cout << "__consumer_offsets-" << p << ": " << skipped
                << " record(s) of other kinds skipped\n";
    }
  }
  ASSERT_TRUE(loaded.contains(g));
  ASSERT_TRUE(loaded.contains(g2));
  const broker::OffsetAndMetadata* o = loaded.at(g).offsets.Find({topic, 0});
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->offset, kN);
  ASSERT_TRUE(loaded.at(g).record.has_value());
  EXPECT_EQ(loaded.at(g).record->members.size(), 1u);
  EXPECT_EQ(loaded.at(g).record->protocol_name, "range");
  o = loaded.at(g2).offsets.Find({topic, 0});
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->offset, kM);
  EXPECT_TRUE(loaded.at(g2).offsets.pending_txns().empty());

  rd_kafka_consumer_close(consumer.get());
}

}  // namespace
}  // namespace exactly
