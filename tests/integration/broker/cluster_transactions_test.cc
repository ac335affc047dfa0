// Transactions and consumer groups across the brokers of a cluster: one
// broker coordinates a transactional id or a group, the same one whichever
// broker is asked (the others answer NOT_COORDINATOR); its markers reach the
// partitions other brokers lead, so a read_committed consumer sees exactly
// the committed records; transactional offsets sent to a group coordinator on
// another broker become the group's offsets when, and only when, the
// transaction commits. librdkafka drives it, as users' clients do.
#include <librdkafka/rdkafka.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"
#include "support/cluster_test.h"
#include "support/group_helpers.h"
#include "support/kafka_client.h"
#include "support/raw_call.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::Call;
using ::exactly::testing::ConsumeAll;
using ::exactly::testing::ConsumedRecord;
using ::exactly::testing::GroupConsumer;
using ::exactly::testing::NewClient;
using ::exactly::testing::PollUntil;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;
using protocol::ErrorCode;

// FindCoordinator v1 asked of `port`: the coordinator's node id, or -1.
int32_t FindCoordinator(uint16_t port, int8_t key_type,
                        const std::string& key) {
  return ::exactly::testing::FindCoordinatorAt(port, key_type, key);
}

void ExpectOk(rd_kafka_error_t* error, const char* what) {
  EXPECT_EQ(error, nullptr)
      << what << ": " << (error ? rd_kafka_error_string(error) : "");
  if (error != nullptr) rd_kafka_error_destroy(error);
}

// The values of one transaction's records: `per_partition` on each of
// `partitions` partitions of `topic`, produced with `producer`.
std::set<std::string> ProduceTransaction(rd_kafka_t* producer,
                                         const std::string& topic,
                                         int32_t partitions, int per_partition,
                                         const std::string& prefix) {
  std::set<std::string> values;
  for (int32_t p = 0; p < partitions; ++p) {
    for (int i = 0; i < per_partition; ++i) {
      std::string value = absl::StrCat(prefix, "-p", p, "-", i);
      EXPECT_EQ(ProduceOne(producer, topic, p, "k", value),
                RD_KAFKA_RESP_ERR_NO_ERROR);
      values.insert(value);
    }
  }
  return values;
}

std::set<std::string> Values(const std::vector<ConsumedRecord>& records) {
  std::set<std::string> values;
  for (const ConsumedRecord& r : records) values.insert(r.value);
  return values;
}

class ClusterTransactionsTest
    : public ::exactly::testing::ThreeBrokerClusterTest {
 protected:
  // The leaders of `topic`'s partitions, as the controller placed them.
  std::set<int32_t> Leaders(const std::string& topic, int32_t partitions) {
    std::set<int32_t> leaders;
    for (int32_t p = 0; p < partitions; ++p) {
      auto d = cluster_->DescribePartition(topic, p);
      EXPECT_TRUE(d.ok()) << d.status();
      if (d.ok()) leaders.insert(d->leader);
    }
    return leaders;
  }

  // The committed offset of `group` for `topic`[0] at broker `node`, once no
  // transaction holds one pending there (RequireStable, as a read_committed
  // consumer asks).
  int64_t StableOffset(int32_t node, const std::string& group,
                       const std::string& topic) {
    protocol::OffsetFetchRequest request;
    request.group_id = group;
    request.topics.emplace();
    request.topics->push_back({topic, {0}, {}});
    request.require_stable = true;
    for (int attempt = 0; attempt < 600; ++attempt) {
      auto response =
          Call<protocol::OffsetFetchResponse>(port(node), 7, request);
      EXPECT_EQ(response.error_code, 0);
      if (response.topics.size() != 1 ||
          response.topics[0].partitions.size() != 1) {
        ADD_FAILURE() << "OffsetFetch answered no partition";
        return -2;
      }
      const auto& p = response.topics[0].partitions[0];
      if (p.error_code !=
          static_cast<int16_t>(ErrorCode::kUnstableOffsetCommit)) {
        EXPECT_EQ(p.error_code, 0);
        return p.committed_offset;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "the offset of " << group << " never became stable";
    return -2;
  }
};

TEST_F(ClusterTransactionsTest, EveryBrokerNamesTheSameCoordinator) {
  for (const std::string key : {"writer-a", "writer-b", "group-x"}) {
    for (int8_t key_type : {protocol::kCoordinatorKeyGroup,
                            protocol::kCoordinatorKeyTransaction}) {
      std::set<int32_t> named;
      for (int32_t node = 1; node <= 3; ++node) {
        named.insert(FindCoordinator(port(node), key_type, key));
        // v4 asks about several keys at once, with the same answer.
        protocol::FindCoordinatorRequest batched;
        batched.key_type = key_type;
        batched.coordinator_keys = {key, "other"};
        auto response =
            Call<protocol::FindCoordinatorResponse>(port(node), 4, batched);
        ASSERT_EQ(response.coordinators.size(), 2u);
        EXPECT_EQ(response.coordinators[0].error_code, 0);
        named.insert(response.coordinators[0].node_id);
        EXPECT_EQ(response.coordinators[0].port,
                  cluster_->broker(response.coordinators[0].node_id).port());
      }
      EXPECT_EQ(named.size(), 1u) << "key '" << key << "'";
    }
  }
  // Keys spread over the brokers, as Kafka's hash partitions do.
  std::set<int32_t> coordinators;
  for (int i = 0; i < 30; ++i) {
    coordinators.insert(FindCoordinator(
        port(1), protocol::kCoordinatorKeyTransaction, absl::StrCat("t", i)));
  }
  EXPECT_EQ(coordinators, (std::set<int32_t>{1, 2, 3}));
}

TEST_F(ClusterTransactionsTest, OtherBrokersAnswerNotCoordinator) {
  const std::string id = "writer-a";
  const int32_t coordinator =
      FindCoordinator(port(1), protocol::kCoordinatorKeyTransaction, id);
  ASSERT_GT(coordinator, 0);
  // A group of the same name has its own coordinator (its own partition's).
  const int32_t group_coordinator =
      FindCoordinator(port(1), protocol::kCoordinatorKeyGroup, id);
  ASSERT_GT(group_coordinator, 0);
  for (int32_t node = 1; node <= 3; ++node) {
    protocol::InitProducerIdRequest init;
    init.transactional_id = id;
    init.transaction_timeout_ms = 60000;
    auto response = Call<protocol::InitProducerIdResponse>(port(node), 1, init);
    EXPECT_EQ(response.error_code,
              node == coordinator
                  ? 0
                  : static_cast<int16_t>(ErrorCode::kNotCoordinator))
        << "broker " << node;

    protocol::HeartbeatRequest heartbeat;
    heartbeat.group_id = id;
    heartbeat.member_id = "nobody";
    heartbeat.generation_id = 1;
    auto beat = Call<protocol::HeartbeatResponse>(port(node), 1, heartbeat);
    // The coordinator knows no such member; the others send the client to it.
    if (node == group_coordinator) {
      EXPECT_EQ(beat.error_code,
                static_cast<int16_t>(ErrorCode::kUnknownMemberId));
    } else {
      EXPECT_EQ(beat.error_code,
                static_cast<int16_t>(ErrorCode::kNotCoordinator))
          << "broker " << node;
    }
  }
}

TEST_F(ClusterTransactionsTest, ReadCommittedSeesExactlyTheCommittedRecords) {
  constexpr int32_t kPartitions = 6;
  constexpr int kTransactions = 10;
  constexpr int kPerPartition = 5;
  ASSERT_TRUE(cluster_->CreateTopic("orders", kPartitions, 3).ok());
  const std::string id = "orders-writer";
  const int32_t coordinator =
      FindCoordinator(port(1), protocol::kCoordinatorKeyTransaction, id);
  ASSERT_GT(coordinator, 0);
  // Most partitions are led by the other two brokers.
  std::set<int32_t> leaders = Leaders("orders", kPartitions);
  leaders.erase(coordinator);
  ASSERT_EQ(leaders.size(), 2u);

  RdKafkaPtr producer =
      NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_},
                                    {"transactional.id", id},
                                    {"linger.ms", "0"}});
  ASSERT_TRUE(producer);
  ExpectOk(rd_kafka_init_transactions(producer.get(), 60000), "init");
  std::set<std::string> committed;
  std::set<std::string> aborted;
  for (int txn = 0; txn < kTransactions; ++txn) {
    const bool commit = txn % 3 != 1;  // commit 7, abort 3
    ExpectOk(rd_kafka_begin_transaction(producer.get()), "begin");
    for (int32_t p = 0; p < kPartitions; ++p) {
      for (int i = 0; i < kPerPartition; ++i) {
        std::string value = absl::StrCat("txn-", txn, "-p", p, "-", i);
        ASSERT_EQ(ProduceOne(producer.get(), "orders", p, "k", value),
                  RD_KAFKA_RESP_ERR_NO_ERROR);
        (commit ? committed : aborted).insert(value);
      }
    }
    if (commit) {
      ExpectOk(rd_kafka_commit_transaction(producer.get(), 60000), "commit");
    } else {
      // Flushed first, so the aborted records are in the logs.
      ASSERT_EQ(rd_kafka_flush(producer.get(), 60000),
                RD_KAFKA_RESP_ERR_NO_ERROR);
      ExpectOk(rd_kafka_abort_transaction(producer.get(), 60000), "abort");
    }
  }
  ASSERT_EQ(committed.size(), 7u * kPartitions * kPerPartition);
  ASSERT_EQ(aborted.size(), 3u * kPartitions * kPerPartition);

  // read_committed: every committed record once, no aborted one.
  std::vector<ConsumedRecord> read =
      ConsumeAll(bootstrap_, "orders", kPartitions, "read_committed",
                 committed.size() + 1, /*idle_ms=*/3000);
  std::map<std::string, int> seen;
  for (const ConsumedRecord& r : read) ++seen[r.value];
  size_t committed_seen = 0;
  for (const auto& [value, count] : seen) {
    EXPECT_EQ(count, 1) << value;
    EXPECT_FALSE(aborted.contains(value)) << "aborted record read: " << value;
    committed_seen += committed.contains(value);
  }
  EXPECT_EQ(committed_seen, committed.size());
  EXPECT_EQ(read.size(), committed.size());

  // read_uncommitted: the aborted records were written too, so it is the
  // markers that hid them.
  std::vector<ConsumedRecord> all =
      ConsumeAll(bootstrap_, "orders", kPartitions, "read_uncommitted",
                 committed.size() + aborted.size());
  EXPECT_EQ(all.size(), committed.size() + aborted.size());
}

TEST_F(ClusterTransactionsTest, OffsetsSentToAnotherBrokersGroupCoordinator) {
  ASSERT_TRUE(cluster_->CreateTopic("input", 1, 3).ok());
  ASSERT_TRUE(cluster_->CreateTopic("output", 3, 3).ok());
  const std::string id = "eos-writer";
  const int32_t txn_coordinator =
      FindCoordinator(port(1), protocol::kCoordinatorKeyTransaction, id);
  ASSERT_GT(txn_coordinator, 0);
  // A group coordinated by another broker than the transaction.
  std::string group;
  int32_t group_coordinator = -1;
  for (int i = 0; i < 50 && group.empty(); ++i) {
    std::string candidate = absl::StrCat("eos-group-", i);
    int32_t node =
        FindCoordinator(port(2), protocol::kCoordinatorKeyGroup, candidate);
    if (node > 0 && node != txn_coordinator) {
      group = candidate;
      group_coordinator = node;
    }
  }
  ASSERT_FALSE(group.empty());
  {
    RdKafkaPtr p =
        NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_}});
    for (int i = 0; i < 20; ++i) {
      ASSERT_EQ(ProduceOne(p.get(), "input", 0, "k", absl::StrCat("in-", i)),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  GroupConsumer consumer(bootstrap_, group);
  consumer.Subscribe("input");
  int consumed = 0;
  ASSERT_TRUE(PollUntil(
      {&consumer}, [&] { return consumed == 20; },
      [&](GroupConsumer&, const ConsumedRecord&) { ++consumed; }));

  RdKafkaPtr producer =
      NewClient(RD_KAFKA_PRODUCER,
                {{"bootstrap.servers", bootstrap_}, {"transactional.id", id}});
  ASSERT_TRUE(producer);
  ExpectOk(rd_kafka_init_transactions(producer.get(), 60000), "init");
  // Each transaction writes output and commits the input offset `offset`.
  auto transact = [&](int64_t offset, bool commit) {
    ExpectOk(rd_kafka_begin_transaction(producer.get()), "begin");
    for (int32_t p = 0; p < 3; ++p) {
      ASSERT_EQ(ProduceOne(producer.get(), "output", p, "k",
                           absl::StrCat("out-", offset, "-", p)),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    rd_kafka_topic_partition_list_t* offsets =
        rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(offsets, "input", 0)->offset = offset;
    rd_kafka_consumer_group_metadata_t* metadata =
        rd_kafka_consumer_group_metadata(consumer.handle());
    ExpectOk(rd_kafka_send_offsets_to_transaction(producer.get(), offsets,
                                                  metadata, 60000),
             "send_offsets_to_transaction");
    rd_kafka_consumer_group_metadata_destroy(metadata);
    rd_kafka_topic_partition_list_destroy(offsets);
    if (commit) {
      ExpectOk(rd_kafka_commit_transaction(producer.get(), 60000), "commit");
    } else {
      ExpectOk(rd_kafka_abort_transaction(producer.get(), 60000), "abort");
    }
  };
  transact(5, true);
  EXPECT_EQ(StableOffset(group_coordinator, group, "input"), 5);
  transact(9, false);
  EXPECT_EQ(StableOffset(group_coordinator, group, "input"), 5);
  transact(12, true);
  EXPECT_EQ(StableOffset(group_coordinator, group, "input"), 12);
  // Only the coordinator holds the group's offsets; the others send clients
  // there.
  for (int32_t node = 1; node <= 3; ++node) {
    if (node == group_coordinator) continue;
    protocol::OffsetFetchRequest request;
    request.group_id = group;
    auto response = Call<protocol::OffsetFetchResponse>(port(node), 7, request);
    EXPECT_EQ(response.error_code,
              static_cast<int16_t>(ErrorCode::kNotCoordinator));
  }
  // The output of the two committed transactions, and not the aborted one.
  std::vector<ConsumedRecord> out =
      ConsumeAll(bootstrap_, "output", 3, "read_committed", 7, 3000);
  std::multiset<std::string> values;
  for (const ConsumedRecord& r : out) values.insert(r.value);
  EXPECT_EQ(values,
            (std::multiset<std::string>{"out-5-0", "out-5-1", "out-5-2",
                                        "out-12-0", "out-12-1", "out-12-2"}));
}

TEST_F(ClusterTransactionsTest, MarkersRefusedByALeaderAreSentAgain) {
  constexpr int32_t kPartitions = 3;
  ASSERT_TRUE(cluster_->CreateTopic("retried", kPartitions, 3).ok());
  const std::string id = "retrying-writer";
  const int32_t coordinator =
      FindCoordinator(port(1), protocol::kCoordinatorKeyTransaction, id);
  ASSERT_GT(coordinator, 0);
  // Every leader other than the coordinator refuses its first two markers,
  // as a broker that just lost the leadership does.
  int refusing = 0;
  for (int32_t leader : Leaders("retried", kPartitions)) {
    if (leader == coordinator) continue;
    cluster_->broker(leader).faults().FailRequests(
        {.api_key = static_cast<int16_t>(protocol::ApiKey::kWriteTxnMarkers)},
        static_cast<int16_t>(ErrorCode::kNotLeaderOrFollower), 2);
    ++refusing;
  }
  ASSERT_EQ(refusing, 2);

  RdKafkaPtr producer =
      NewClient(RD_KAFKA_PRODUCER,
                {{"bootstrap.servers", bootstrap_}, {"transactional.id", id}});
  ASSERT_TRUE(producer);
  ExpectOk(rd_kafka_init_transactions(producer.get(), 60000), "init");
  ExpectOk(rd_kafka_begin_transaction(producer.get()), "begin");
  std::set<std::string> first =
      ProduceTransaction(producer.get(), "retried", kPartitions, 4, "first");
  ExpectOk(rd_kafka_commit_transaction(producer.get(), 60000), "commit");
  // The next transaction starts once the coordinator has every marker of
  // the first acknowledged (CONCURRENT_TRANSACTIONS until then).
  ExpectOk(rd_kafka_begin_transaction(producer.get()), "begin");
  std::set<std::string> second =
      ProduceTransaction(producer.get(), "retried", kPartitions, 4, "second");
  ExpectOk(rd_kafka_commit_transaction(producer.get(), 60000), "commit");

  std::set<std::string> expected = first;
  expected.insert(second.begin(), second.end());
  std::vector<ConsumedRecord> read = ConsumeAll(
      bootstrap_, "retried", kPartitions, "read_committed", expected.size());
  EXPECT_EQ(read.size(), expected.size());
  EXPECT_EQ(Values(read), expected);
  // The refusals did happen.
  for (int32_t leader : Leaders("retried", kPartitions)) {
    if (leader == coordinator) continue;
    int injected = 0;
    for (const std::string& line : cluster_->broker(leader).faults().History())
      injected += line.starts_with("injected") &&
                  line.find("WriteTxnMarkers") != std::string::npos;
    EXPECT_GE(injected, 1) << "broker " << leader;
  }
}

TEST_F(ClusterTransactionsTest, RestartedCoordinatorFinishesMarkersOnOthers) {
  constexpr int32_t kPartitions = 3;
  ASSERT_TRUE(cluster_->CreateTopic("recover", kPartitions, 3).ok());
  const std::string id = "recovering-writer";
  const int32_t coordinator =
      FindCoordinator(port(1), protocol::kCoordinatorKeyTransaction, id);
  ASSERT_GT(coordinator, 0);
  RdKafkaPtr producer =
      NewClient(RD_KAFKA_PRODUCER,
                {{"bootstrap.servers", bootstrap_}, {"transactional.id", id}});
  ASSERT_TRUE(producer);
  ExpectOk(rd_kafka_init_transactions(producer.get(), 60000), "init");
  ExpectOk(rd_kafka_begin_transaction(producer.get()), "begin");
  std::set<std::string> committed =
      ProduceTransaction(producer.get(), "recover", kPartitions, 5, "held");
  // PrepareCommit is persisted and the producer told, then the coordinator
  // stops as if it crashed before sending any marker.
  cluster_->broker(coordinator).faults().HoldTransactionMarkers(1);
  ExpectOk(rd_kafka_commit_transaction(producer.get(), 60000), "commit");
  EXPECT_TRUE(ConsumeAll(bootstrap_, "recover", kPartitions, "read_committed",
                         1, /*idle_ms=*/1000)
                  .empty())
      << "records visible before any marker was written";
  ASSERT_TRUE(
      cluster_->broker(coordinator).Restart(Broker::RestartMode::kCrash).ok());

  // The restarted coordinator sends the markers to the partitions' leaders
  // (others now, for the partitions it led before).
  std::vector<ConsumedRecord> read = ConsumeAll(
      bootstrap_, "recover", kPartitions, "read_committed", committed.size());
  EXPECT_EQ(read.size(), committed.size());
  EXPECT_EQ(Values(read), committed);
}

}  // namespace
}  // namespace exactly::broker
