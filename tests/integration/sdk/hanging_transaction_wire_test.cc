// KIP-664's hanging-transaction tools over the wire, the same test against the
// bundled broker and against Apache Kafka (CTest's kafka labels run it there):
// a transactional producer leaves a transaction open on a partition, and
// DescribeProducers (to the partition leader), ListTransactions and
// DescribeTransactions (to the transaction coordinator) must describe it as
// Kafka 3.9 does; WriteTxnMarkers, sent as Kafka's admin client sends it for
// abortTransaction (v1, ABORT, the producer's id and epoch, the coordinator
// epoch DescribeProducers reported or 0), must end it on the partition so
// that the last stable offset moves past it and read_committed readers get
// past it. WriteTxnMarkers is an inter-broker API (ClusterAction); a cluster
// without an authorizer, as scripts/kafka.sh runs it, allows it.
//
// Leader and coordinator are found over the wire (Metadata, FindCoordinator),
// so nothing here depends on the cluster being the bundled broker. Listings
// are filtered by this test's producer id: a shared Kafka cluster holds other
// tests' transactions too.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "sdk_test_util.h"
#include "support/kafka_client.h"
#include "support/raw_client.h"

namespace exactly::testing {
namespace {

using protocol::ErrorCode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int kRecords = 3;
constexpr int32_t kTimeoutMs = 60000;  // outlives the test: no timeout abort
constexpr int64_t kTimestamp = 1700000000000;

int16_t Code(ErrorCode c) { return static_cast<int16_t>(c); }

// The port of host:port (the first of a list), on this machine.
uint16_t PortOf(const std::string& servers) {
  const std::vector<std::string> all = absl::StrSplit(servers, ',');
  const std::string& first = all.front();
  int port = 0;
  EXPECT_TRUE(absl::SimpleAtoi(first.substr(first.rfind(':') + 1), &port))
      << servers;
  return static_cast<uint16_t>(port);
}

bool IsLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost";
}

// Delivery reports of the transactional producer: the offsets its records
// got.
struct Deliveries {
  std::mutex mu;
  std::vector<int64_t> offsets;
  int errors = 0;

  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m,
                         void* opaque) {
    auto* self = static_cast<Deliveries*>(opaque);
    std::lock_guard<std::mutex> lock(self->mu);
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      self->offsets.push_back(m->offset);
    } else {
      ++self->errors;
    }
  }
};

// An answer of rd_kafka_*_transaction: no error, or a test failure naming it.
::testing::AssertionResult TxnOk(rd_kafka_error_t* error) {
  if (error == nullptr) return ::testing::AssertionSuccess();
  ::testing::AssertionResult r = ::testing::AssertionFailure()
                                 << rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  return r;
}

class HangingTransactionWireTest : public SdkTest {
 protected:
  // The version range `key` the server at `port` advertises, or {-1, -1}.
  static std::pair<int, int> Advertised(uint16_t port, protocol::ApiKey key) {
    RawClient c(port, "hanging-wire");
    auto r = c.Call<protocol::ApiVersionsResponse>(
        protocol::ApiVersionsRequest{}, 0);
    for (const auto& a : r.api_keys) {
      if (a.api_key == static_cast<int16_t>(key)) {
        return {a.min_version, a.max_version};
      }
    }
    return {-1, -1};
  }

  // The port of the leader of topic[partition] (waits while it has none).
  uint16_t LeaderPort(const std::string& topic, int32_t partition) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    RawClient c(PortOf(bootstrap()), "hanging-wire");
    while (std::chrono::steady_clock::now() < deadline) {
      protocol::MetadataRequest request;
      request.topics = std::vector<protocol::MetadataRequest::Topic>{{topic}};
      request.allow_auto_topic_creation = false;
      auto r = c.Call<protocol::MetadataResponse>(request, 5);
      int32_t leader = -1;
      for (const auto& t : r.topics) {
        for (const auto& p : t.partitions) {
          if (t.name == topic && p.index == partition && p.error_code == 0) {
            leader = p.leader_id;
          }
        }
      }
      for (const auto& b : r.brokers) {
        if (leader >= 0 && b.node_id == leader) {
          EXPECT_TRUE(IsLoopback(b.host)) << b.host;
          return static_cast<uint16_t>(b.port);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << topic << "[" << partition << "] has no leader";
    return 0;
  }

  // The port of the transaction coordinator of `transactional_id`.
  uint16_t CoordinatorPort(const std::string& transactional_id) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    RawClient c(PortOf(bootstrap()), "hanging-wire");
    while (std::chrono::steady_clock::now() < deadline) {
      protocol::FindCoordinatorRequest request;
      request.key = transactional_id;
      request.key_type = protocol::kCoordinatorKeyTransaction;
      auto r = c.Call<protocol::FindCoordinatorResponse>(request, 1);
      if (r.error_code == 0) {
        EXPECT_TRUE(IsLoopback(r.host)) << r.host;
        return static_cast<uint16_t>(r.port);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "no coordinator for " << transactional_id;
    return 0;
  }

  static protocol::DescribeProducersResponse::Partition DescribeProducers(
      uint16_t leader, const std::string& topic, int32_t partition) {
    RawClient c(leader, "hanging-wire");
    protocol::DescribeProducersRequest request;
    request.topics = {{topic, {partition}, {}}};
    auto r = c.Call<protocol::DescribeProducersResponse>(request, 0);
    EXPECT_EQ(r.topics.size(), 1u);
    if (r.topics.size() != 1 || r.topics[0].partitions.size() != 1) return {};
    EXPECT_EQ(r.topics[0].name, topic);
    EXPECT_EQ(r.topics[0].partitions[0].index, partition);
    return r.topics[0].partitions[0];
  }

  static protocol::ListTransactionsResponse ListTransactions(
      uint16_t coordinator, protocol::ListTransactionsRequest request,
      int16_t version) {
    RawClient c(coordinator, "hanging-wire");
    auto r = c.Call<protocol::ListTransactionsResponse>(request, version);
    EXPECT_EQ(r.error_code, 0);
    return r;
  }

  static std::vector<std::string> Ids(
      const protocol::ListTransactionsResponse& r) {
    std::vector<std::string> ids;
    for (const auto& t : r.transactions) ids.push_back(t.transactional_id);
    return ids;
  }

  static protocol::DescribeTransactionsResponse::Transaction
  DescribeTransaction(uint16_t coordinator, const std::string& id) {
    RawClient c(coordinator, "hanging-wire");
    protocol::DescribeTransactionsRequest request;
    request.transactional_ids = {id};
    auto r = c.Call<protocol::DescribeTransactionsResponse>(request, 0);
    EXPECT_EQ(r.transactions.size(), 1u);
    if (r.transactions.size() != 1) return {};
    EXPECT_EQ(r.transactions[0].transactional_id, id);
    return r.transactions[0];
  }

  // One WriteTxnMarkers v1 (what Kafka's admin client sends) of one ABORT
  // marker on topic[partition]; the partition's error code.
  static int16_t WriteAbortMarker(uint16_t leader, const std::string& topic,
                                  int32_t partition, int64_t producer_id,
                                  int16_t producer_epoch,
                                  int32_t coordinator_epoch) {
    RawClient c(leader, "hanging-wire");
    protocol::WriteTxnMarkersRequest request;
    protocol::WriteTxnMarkersRequest::Marker m;
    m.producer_id = producer_id;
    m.producer_epoch = producer_epoch;
    m.transaction_result = false;  // ABORT
    m.topics = {{topic, {partition}, {}}};
    m.coordinator_epoch = coordinator_epoch;
    request.markers = {m};
    auto r = c.Call<protocol::WriteTxnMarkersResponse>(request, 1);
    if (r.markers.size() != 1 || r.markers[0].topics.size() != 1 ||
        r.markers[0].topics[0].partitions.size() != 1) {
      ADD_FAILURE() << "not one marker's answer";
      return -2;
    }
    EXPECT_EQ(r.markers[0].producer_id, producer_id);
    EXPECT_EQ(r.markers[0].topics[0].name, topic);
    EXPECT_EQ(r.markers[0].topics[0].partitions[0].index, partition);
    return r.markers[0].topics[0].partitions[0].error_code;
  }

  // ListOffsets' latest offset of topic[partition]: the last stable offset
  // under read_committed, the high watermark under read_uncommitted.
  static int64_t LatestOffset(uint16_t leader, const std::string& topic,
                              int32_t partition, bool read_committed) {
    RawClient c(leader, "hanging-wire");
    protocol::ListOffsetsRequest request;
    request.isolation_level = read_committed ? 1 : 0;
    auto& t = request.topics.emplace_back();
    t.name = topic;
    t.partitions.push_back({partition, -1, protocol::kListOffsetsLatest, 1});
    auto r = c.Call<protocol::ListOffsetsResponse>(request, 5);
    if (r.topics.size() != 1 || r.topics[0].partitions.size() != 1) {
      ADD_FAILURE() << "no ListOffsets answer for " << topic;
      return -2;
    }
    EXPECT_EQ(r.topics[0].partitions[0].error_code, 0);
    return r.topics[0].partitions[0].offset;
  }
};

TEST_F(HangingTransactionWireTest, AdvertisedAsKafka39Does) {
  SKIP_WITHOUT_TRANSACTIONS();
  const uint16_t port = PortOf(bootstrap());
  EXPECT_EQ(Advertised(port, protocol::ApiKey::kDescribeProducers),
            std::make_pair(0, 0));
  EXPECT_EQ(Advertised(port, protocol::ApiKey::kDescribeTransactions),
            std::make_pair(0, 0));
  EXPECT_EQ(Advertised(port, protocol::ApiKey::kListTransactions),
            std::make_pair(0, 1));
  EXPECT_EQ(Advertised(port, protocol::ApiKey::kWriteTxnMarkers),
            std::make_pair(0, 1));
}

TEST_F(HangingTransactionWireTest, FindDescribeAbortAnOpenTransaction) {
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("hanging-wire", 1);
  const std::string txn_id = TestCluster::UniqueName("hanging-wire-txn");

  // 1. A transaction left open: records sent and flushed, never committed,
  // by the second producer of its transactional id (epoch 1, so that a
  // marker of an older epoch can be tried).
  {
    RdKafkaPtr first =
        NewClient(RD_KAFKA_PRODUCER,
                  {{"bootstrap.servers", bootstrap()},
                   {"transactional.id", txn_id},
                   {"transaction.timeout.ms", std::to_string(kTimeoutMs)}});
    ASSERT_TRUE(first);
    ASSERT_TRUE(TxnOk(rd_kafka_init_transactions(first.get(), 30000)));
  }
  Deliveries deliveries;
  RdKafkaPtr producer =
      NewClient(RD_KAFKA_PRODUCER,
                {{"bootstrap.servers", bootstrap()},
                 {"transactional.id", txn_id},
                 {"transaction.timeout.ms", std::to_string(kTimeoutMs)},
                 {"linger.ms", "0"}},
                &Deliveries::OnDelivery, &deliveries);
  ASSERT_TRUE(producer);
  ASSERT_TRUE(TxnOk(rd_kafka_init_transactions(producer.get(), 30000)));
  ASSERT_TRUE(TxnOk(rd_kafka_begin_transaction(producer.get())));
  for (int i = 0; i < kRecords; ++i) {
    const std::string value = "open-" + std::to_string(i);
    ASSERT_EQ(
        rd_kafka_producev(
            producer.get(), RD_KAFKA_V_TOPIC(topic.c_str()),
            RD_KAFKA_V_PARTITION(0),
            RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
            RD_KAFKA_V_TIMESTAMP(kTimestamp + i),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
        RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ASSERT_EQ(rd_kafka_flush(producer.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  int64_t first_offset = -1;
  {
    std::lock_guard<std::mutex> lock(deliveries.mu);
    ASSERT_EQ(deliveries.errors, 0);
    ASSERT_EQ(deliveries.offsets.size(), static_cast<size_t>(kRecords));
    first_offset =
        *std::min_element(deliveries.offsets.begin(), deliveries.offsets.end());
  }
  EXPECT_EQ(first_offset, 0) << "a new topic";

  const uint16_t leader = LeaderPort(topic, 0);
  const uint16_t coordinator = CoordinatorPort(txn_id);
  ASSERT_NE(leader, 0);
  ASSERT_NE(coordinator, 0);

  // The open transaction holds the last stable offset at its first record.
  EXPECT_EQ(LatestOffset(leader, topic, 0, /*read_committed=*/false),
            first_offset + kRecords);
  EXPECT_EQ(LatestOffset(leader, topic, 0, /*read_committed=*/true),
            first_offset);

  // 2. The leader knows the producer and where its transaction starts.
  auto described = DescribeProducers(leader, topic, 0);
  EXPECT_EQ(described.error_code, 0);
  ASSERT_EQ(described.active_producers.size(), 1u);
  const auto producer_state = described.active_producers[0];
  EXPECT_GE(producer_state.producer_id, 0);
  EXPECT_EQ(producer_state.producer_epoch, 1) << "the second producer";
  EXPECT_EQ(producer_state.last_sequence, kRecords - 1);
  EXPECT_EQ(producer_state.last_timestamp, kTimestamp + kRecords - 1);
  EXPECT_EQ(producer_state.coordinator_epoch, -1) << "no marker yet";
  EXPECT_EQ(producer_state.current_txn_start_offset, first_offset);
  EXPECT_EQ(DescribeProducers(leader, topic, 7).error_code,
            Code(ErrorCode::kUnknownTopicOrPartition));
  const int64_t producer_id = producer_state.producer_id;
  const int16_t producer_epoch =
      static_cast<int16_t>(producer_state.producer_epoch);

  // 3. The coordinator lists it as Ongoing, under that producer id.
  protocol::ListTransactionsRequest mine;
  mine.producer_id_filters = {producer_id};
  auto listed = ListTransactions(coordinator, mine, 0);
  ASSERT_EQ(listed.transactions.size(), 1u);
  EXPECT_EQ(listed.transactions[0].transactional_id, txn_id);
  EXPECT_EQ(listed.transactions[0].producer_id, producer_id);
  EXPECT_EQ(listed.transactions[0].state, "Ongoing");
  EXPECT_THAT(listed.unknown_state_filters, IsEmpty());

  protocol::ListTransactionsRequest ongoing;
  ongoing.state_filters = {"Ongoing"};
  EXPECT_THAT(Ids(ListTransactions(coordinator, ongoing, 0)),
              ::testing::Contains(txn_id));
  protocol::ListTransactionsRequest committed;
  committed.state_filters = {"CompleteCommit"};
  auto none = ListTransactions(coordinator, committed, 0);
  EXPECT_THAT(Ids(none), Not(::testing::Contains(txn_id)));
  EXPECT_THAT(none.unknown_state_filters, IsEmpty());
  mine.state_filters = {"CompleteCommit"};
  EXPECT_THAT(ListTransactions(coordinator, mine, 0).transactions, IsEmpty());
  mine.state_filters = {"NoSuchState"};
  auto unknown = ListTransactions(coordinator, mine, 0);
  EXPECT_THAT(unknown.transactions, IsEmpty());
  EXPECT_THAT(unknown.unknown_state_filters, ElementsAre("NoSuchState"));
  mine.state_filters.clear();

  // 4. DescribeTransactions: Ongoing, its timeout, its partition.
  auto txn = DescribeTransaction(coordinator, txn_id);
  EXPECT_EQ(txn.error_code, 0);
  EXPECT_EQ(txn.state, "Ongoing");
  EXPECT_EQ(txn.timeout_ms, kTimeoutMs);
  EXPECT_GT(txn.start_time_ms, 0);
  EXPECT_EQ(txn.producer_id, producer_id);
  EXPECT_EQ(txn.producer_epoch, producer_epoch);
  ASSERT_EQ(txn.topics.size(), 1u);
  EXPECT_EQ(txn.topics[0].topic, topic);
  EXPECT_THAT(txn.topics[0].partitions, ElementsAre(0));

  // An id nobody used, asked of its own coordinator (another node's, maybe).
  const std::string nobody = txn_id + "-nobody";
  EXPECT_EQ(DescribeTransaction(CoordinatorPort(nobody), nobody).error_code,
            Code(ErrorCode::kTransactionalIdNotFound));

  // v1's duration filter (KIP-994): those running longer than it.
  if (Advertised(coordinator, protocol::ApiKey::kListTransactions).second >=
      1) {
    mine.duration_filter = 3600000;
    EXPECT_THAT(ListTransactions(coordinator, mine, 1).transactions, IsEmpty());
    // Once the transaction is older than 0 ms by the clock both share.
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
                   .count() <= txn.start_time_ms &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    mine.duration_filter = 0;
    EXPECT_THAT(Ids(ListTransactions(coordinator, mine, 1)),
                ElementsAre(txn_id));
    mine.duration_filter = -1;
  }

  // 5. Abort it on the partition as Kafka's admin client does. An epoch older
  // than the producer's is refused, as is a partition the topic lacks; neither
  // writes anything. (Epoch -1, none, fails the request as a whole:
  // MarkersKafkaCannotWrite.)
  EXPECT_EQ(WriteAbortMarker(leader, topic, 0, producer_id,
                             static_cast<int16_t>(producer_epoch - 1), 0),
            Code(ErrorCode::kInvalidProducerEpoch));
  EXPECT_EQ(WriteAbortMarker(leader, topic, 7, producer_id, producer_epoch, 0),
            Code(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(LatestOffset(leader, topic, 0, false), first_offset + kRecords);
  ASSERT_EQ(WriteAbortMarker(leader, topic, 0, producer_id, producer_epoch,
                             std::max(producer_state.coordinator_epoch, 0)),
            0);

  // 6. The marker follows the records; the last stable offset moves
  // past it.
  const int64_t marker_offset = first_offset + kRecords;
  int64_t lso = -1;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while ((lso = LatestOffset(leader, topic, 0, true)) <= marker_offset &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(lso, marker_offset + 1);
  EXPECT_EQ(LatestOffset(leader, topic, 0, false), marker_offset + 1);

  auto after = DescribeProducers(leader, topic, 0);
  EXPECT_EQ(after.error_code, 0);
  ASSERT_EQ(after.active_producers.size(), 1u);
  EXPECT_EQ(after.active_producers[0].producer_id, producer_id);
  EXPECT_EQ(after.active_producers[0].producer_epoch, producer_epoch);
  EXPECT_EQ(after.active_producers[0].current_txn_start_offset, -1);
  EXPECT_EQ(after.active_producers[0].coordinator_epoch, 0);

  // The coordinator never heard of the marker: to it, the transaction
  // is still going on.
  EXPECT_EQ(DescribeTransaction(coordinator, txn_id).state, "Ongoing");

  // 7. A read_committed reader passes the aborted records: the first
  // record it sees is one another producer writes afterwards.
  RdKafkaPtr plain =
      NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap()}});
  ASSERT_TRUE(plain);
  ASSERT_EQ(ProduceOne(plain.get(), topic, 0, "k", "after"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(plain.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  auto records = ConsumeAll(bootstrap(), topic, 1, "read_committed", 1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].value, "after");
  EXPECT_EQ(records[0].offset, marker_offset + 1);

  // 8. The producer may still abort its transaction: the coordinator
  // writes its own marker, which the partition accepts with nothing
  // open.
  ASSERT_TRUE(TxnOk(rd_kafka_abort_transaction(producer.get(), 30000)));
  std::string state;
  const auto settled = std::chrono::steady_clock::now() + kPatience;
  while ((state = DescribeTransaction(coordinator, txn_id).state) !=
             "CompleteAbort" &&
         std::chrono::steady_clock::now() < settled) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(state, "CompleteAbort");
  EXPECT_EQ(DescribeProducers(leader, topic, 0)
                .active_producers.at(0)
                .current_txn_start_offset,
            -1);
}

// Markers Kafka cannot write, answered as Kafka 3.9 answers them. Not what an
// admin client sends, but what the bundled broker must not write either (it
// wrote a marker of producer id -1, and one of epoch -2).
TEST_F(HangingTransactionWireTest, MarkersKafkaCannotWrite) {
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("hanging-wire-bad", 1);
  const uint16_t leader = LeaderPort(topic, 0);
  ASSERT_NE(leader, 0);
  auto marker = [&](int64_t producer_id, int16_t epoch,
                    std::vector<int32_t> partitions) {
    protocol::WriteTxnMarkersRequest::Marker m;
    m.producer_id = producer_id;
    m.producer_epoch = epoch;
    m.transaction_result = false;
    m.topics = {{topic, std::move(partitions), {}}};
    m.coordinator_epoch = 0;
    return m;
  };
  // Every partition's error code, in order of the request.
  auto write = [&](std::vector<protocol::WriteTxnMarkersRequest::Marker> ms) {
    RawClient c(leader, "hanging-wire");
    protocol::WriteTxnMarkersRequest request;
    request.markers = ms;
    auto r = c.Call<protocol::WriteTxnMarkersResponse>(request, 1);
    std::vector<int16_t> codes;
    for (const auto& m : ms) {
      for (int32_t index : m.topics.at(0).partition_indexes) {
        int16_t code = -100;  // not answered
        for (const auto& rm : r.markers) {
          for (const auto& rt : rm.topics) {
            for (const auto& rp : rt.partitions) {
              if (rm.producer_id == m.producer_id && rt.name == topic &&
                  rp.index == index) {
                code = rp.error_code;
              }
            }
          }
        }
        codes.push_back(code);
      }
    }
    return codes;
  };
  const int16_t unknown_server_error = Code(ErrorCode::kUnknownServerError);

  // No producer id: nothing to build a control batch for.
  EXPECT_THAT(write({marker(-1, 0, {0})}), ElementsAre(unknown_server_error));
  // Below -1 is older than the epoch of a producer not seen yet.
  EXPECT_THAT(write({marker(777001, -2, {0})}),
              ElementsAre(Code(ErrorCode::kInvalidProducerEpoch)));
  // Epoch -1 with a producer id: nothing to build either.
  EXPECT_THAT(write({marker(777002, -1, {0})}),
              ElementsAre(unknown_server_error));
  // No producer id on a partition the broker lacks: nothing is built, so
  // the partition's own error.
  EXPECT_THAT(write({marker(-1, 0, {5})}),
              ElementsAre(Code(ErrorCode::kUnknownTopicOrPartition)));
  EXPECT_EQ(LatestOffset(leader, topic, 0, false), 0);

  // A marker with no producer id fails the whole request; the markers before
  // it are written, those after it are not. (Kafka answers the failure at
  // once, before the marker written is replicated: wait for it.)
  EXPECT_THAT(write({marker(777003, 0, {0}), marker(-1, 0, {0, 5}),
                     marker(777005, 0, {0})}),
              ElementsAre(unknown_server_error, unknown_server_error,
                          unknown_server_error, unknown_server_error));
  int64_t high_watermark = 0;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while ((high_watermark = LatestOffset(leader, topic, 0, false)) < 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(high_watermark, 1);
  // The leader's producers are those of the markers appended.
  auto described = DescribeProducers(leader, topic, 0);
  ASSERT_EQ(described.active_producers.size(), 1u);
  EXPECT_EQ(described.active_producers[0].producer_id, 777003);
  EXPECT_EQ(described.active_producers[0].current_txn_start_offset, -1);
}
}  // namespace
}  // namespace exactly::testing
