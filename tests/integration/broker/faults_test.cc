// Each injected fault, what a librdkafka client sees, and that nothing the
// broker acknowledged is lost or duplicated (except what the power-loss
// simulation is meant to lose, asserted exactly).
#include <librdkafka/rdkafka.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "admin/admin_commands.h"
#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/api_key.h"
#include "protocol/error_code.h"
#include "support/kafka_client.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::ConsumeAll;
using ::exactly::testing::DeliveryCounter;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;
using ::exactly::testing::TempDir;

constexpr int16_t kProduce = static_cast<int16_t>(protocol::ApiKey::kProduce);

std::unique_ptr<Broker> StartBroker(BrokerOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Broker>> b = Broker::Start(options);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? std::move(*b) : nullptr;
}

RdKafkaPtr IdempotentProducer(const std::string& bootstrap,
                              DeliveryCounter* counter,
                              std::map<std::string, std::string> extra = {}) {
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", bootstrap},
      {"enable.idempotence", "true"},
      {"linger.ms", "1"},
      {"batch.num.messages", "100"},
      {"retry.backoff.ms", "20"},
      {"reconnect.backoff.ms", "20"},
      {"reconnect.backoff.max.ms", "200"}};
  for (auto& [k, v] : extra) props[k] = v;
  return NewClient(RD_KAFKA_PRODUCER, props, &DeliveryCounter::OnDelivery,
                   counter);
}

// Produces values "v0".."v<n-1>" to partition 0, calling `during` once a third
// has been handed to librdkafka, and waits for every delivery report.
void ProduceWith(rd_kafka_t* p, DeliveryCounter& counter,
                 const std::string& topic, int n,
                 const std::function<void()>& during = {}) {
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(ProduceOne(p, topic, 0, "k", absl::StrCat("v", i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    if (i == n / 3 && during) during();
    rd_kafka_poll(p, 0);
  }
  ASSERT_EQ(rd_kafka_flush(p, 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(counter.delivered.load(), n);
  EXPECT_EQ(counter.failed.load(), 0);
}

// The broker's log of topic[0] holds exactly v0..v<n-1>, once each, in order.
void ExpectExactlyOnce(Broker& broker, const std::string& topic, int n) {
  absl::StatusOr<std::vector<LoggedBatch>> log = broker.ReadLog(topic, 0);
  ASSERT_TRUE(log.ok()) << log.status();
  int next = 0;
  for (const LoggedBatch& b : *log) {
    for (const LoggedRecord& r : b.records) {
      ASSERT_EQ(r.value.value_or(""), absl::StrCat("v", next))
          << "at offset " << r.offset;
      ++next;
    }
  }
  EXPECT_EQ(next, n);
}

bool HistoryHas(Broker& broker, std::string_view needle) {
  for (const std::string& line : broker.faults().History()) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(FaultsTest, InjectedRetriableErrorsAreRetriedWithoutDuplicates) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("errors", 1).ok());
  broker->faults().FailRequests(
      {.api_key = kProduce, .topic = "errors", .partition = 0},
      static_cast<int16_t>(protocol::ErrorCode::kNotLeaderOrFollower),
      /*count=*/5);
  DeliveryCounter counter;
  RdKafkaPtr p = IdempotentProducer(broker->bootstrap_servers(), &counter);
  ProduceWith(p.get(), counter, "errors", 2000);
  ExpectExactlyOnce(*broker, "errors", 2000);
  EXPECT_TRUE(HistoryHas(
      *broker, "injected NOT_LEADER_OR_FOLLOWER into Produce errors[0]"));
}

TEST(FaultsTest, NonRetriableInjectedErrorReachesTheApplication) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("fatal", 1).ok());
  broker->faults().FailRequests(
      {.api_key = kProduce},
      static_cast<int16_t>(protocol::ErrorCode::kMessageTooLarge), 1);
  DeliveryCounter counter;
  RdKafkaPtr p = NewClient(RD_KAFKA_PRODUCER,
                           {{"bootstrap.servers", broker->bootstrap_servers()}},
                           &DeliveryCounter::OnDelivery, &counter);
  ASSERT_EQ(ProduceOne(p.get(), "fatal", 0, "k", "rejected"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_flush(p.get(), 30000);
  EXPECT_EQ(counter.failed.load(), 1);
  EXPECT_EQ(counter.last_error.load(), RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
  absl::StatusOr<PartitionOffsets> o = broker->Offsets("fatal", 0);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->log_end_offset, 0) << "an answered error appends nothing";
}

TEST(FaultsTest, LatencyBeyondTheClientTimeoutCausesRetriesNotDuplicates) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("slow", 1).ok());
  DeliveryCounter counter;
  // The producer gives up on a request once socket.timeout.ms has passed
  // (librdkafka looks once a second; request.timeout.ms is only the
  // broker's acks wait), closes the connection and sends it again; the
  // broker had appended it, so the idempotent producer's retry is a
  // duplicate the broker must drop.
  RdKafkaPtr p = IdempotentProducer(
      broker->bootstrap_servers(), &counter,
      {{"socket.timeout.ms", "500"}, {"message.timeout.ms", "60000"}});
  ProduceWith(p.get(), counter, "slow", 600, [&] {
    broker->faults().AddLatency(1500, {.api_key = kProduce});
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    broker->faults().AddLatency(0);
  });
  ExpectExactlyOnce(*broker, "slow", 600);
}

TEST(FaultsTest, ClosedConnectionsAreReopenedAndNothingIsLostOrDuplicated) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("closed", 1).ok());
  DeliveryCounter counter;
  RdKafkaPtr p = IdempotentProducer(broker->bootstrap_servers(), &counter);
  ProduceWith(p.get(), counter, "closed", 3000, [&] {
    for (int i = 0; i < 3; ++i) {
      broker->faults().CloseAllConnections();
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
  });
  ExpectExactlyOnce(*broker, "closed", 3000);
  EXPECT_TRUE(HistoryHas(*broker, "closing every client connection"));
}

TEST(FaultsTest, BrokerDownRefusesConnectionsThenComesBack) {
  auto broker = StartBroker();
  ASSERT_TRUE(broker->CreateTopic("down", 1).ok());
  DeliveryCounter counter;
  RdKafkaPtr p = IdempotentProducer(broker->bootstrap_servers(), &counter);
  ProduceWith(p.get(), counter, "down", 3000, [&] {
    broker->faults().BrokerDown(1000);
    // While it is down, a new client cannot even connect.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    RdKafkaPtr probe =
        NewClient(RD_KAFKA_PRODUCER,
                  {{"bootstrap.servers", broker->bootstrap_servers()}});
    const rd_kafka_metadata_t* md = nullptr;
    EXPECT_NE(rd_kafka_metadata(probe.get(), 1, nullptr, &md, 300),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    if (md != nullptr) rd_kafka_metadata_destroy(md);
  });
  ExpectExactlyOnce(*broker, "down", 3000);
}

TEST(FaultsTest, PowerLossDiscardsExactlyTheUnflushedTail) {
  TempDir dir;
  BrokerOptions options;
  options.data_dir = dir.path();
  options.flush.every_messages = 1000;  // fsync once 1000 records are written
  auto broker = StartBroker(options);
  ASSERT_TRUE(broker->CreateTopic("power", 1).ok());

  // One batch of exactly 1000 records (synced), then one of 500 (written, not
  // synced).
  DeliveryCounter counter;
  RdKafkaPtr p = IdempotentProducer(
      broker->bootstrap_servers(), &counter,
      {{"linger.ms", "5000"}, {"batch.num.messages", "1000"}});
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(ProduceOne(p.get(), "power", 0, "k", absl::StrCat("v", i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  for (int i = 1000; i < 1500; ++i) {
    ASSERT_EQ(ProduceOne(p.get(), "power", 0, "k", absl::StrCat("v", i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(counter.delivered.load(), 1500);
  ExpectExactlyOnce(*broker, "power", 1500);
  absl::StatusOr<std::vector<LoggedBatch>> before = broker->ReadLog("power", 0);
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->size(), 2u) << "the test needs exactly two batches";
  ASSERT_EQ(before->front().records.size(), 1000u);

  // A power loss keeps what was synced: the first batch, nothing of the second.
  // (A crash would keep both: they were written to the OS. It must not come
  // first here, since the store's recovery at start-up makes everything it
  // replays durable.)
  ASSERT_TRUE(broker->Restart(Broker::RestartMode::kPowerLoss).ok());
  ExpectExactlyOnce(*broker, "power", 1000);
  absl::StatusOr<PartitionOffsets> o = broker->Offsets("power", 0);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->log_end_offset, 1000);
  EXPECT_TRUE(HistoryHas(*broker, "restart: power loss"));
}

TEST(FaultsTest, PowerLossWithSyncAfterEveryCommitLosesNothing) {
  TempDir dir;
  BrokerOptions options;
  options.data_dir = dir.path();
  options.flush.every_messages = 1;
  auto broker = StartBroker(options);
  ASSERT_TRUE(broker->CreateTopic("synced", 1).ok());
  DeliveryCounter counter;
  RdKafkaPtr p = IdempotentProducer(broker->bootstrap_servers(), &counter);
  ProduceWith(p.get(), counter, "synced", 1000);
  ASSERT_TRUE(broker->Restart(Broker::RestartMode::kPowerLoss).ok());
  ExpectExactlyOnce(*broker, "synced", 1000);
}

TEST(AdminCommandsTest, CommandsDriveTheFaultModel) {
  auto broker = StartBroker();
  EXPECT_EQ(RunAdminCommand(*broker, "create-topic name=admin partitions=2"),
            "ok");
  EXPECT_EQ(
      RunAdminCommand(*broker,
                      "fail-requests api=Produce error=NOT_LEADER_OR_FOLLOWER "
                      "count=2 topic=admin partition=1"),
      "ok");
  EXPECT_EQ(
      RunAdminCommand(*broker, "drop-produce-responses count=3 one-in=10"),
      "ok");
  EXPECT_EQ(RunAdminCommand(*broker, "latency ms=5 api=Fetch"), "ok");
  EXPECT_EQ(RunAdminCommand(*broker, "hold-txn-markers count=1"), "ok");
  EXPECT_EQ(RunAdminCommand(*broker, "offsets topic=admin partition=1"),
            "ok log_start=0 hwm=0 lso=0 leo=0");
  std::string history = RunAdminCommand(*broker, "history");
  EXPECT_NE(history.find("NOT_LEADER_OR_FOLLOWER"), std::string::npos)
      << history;
  EXPECT_EQ(RunAdminCommand(*broker, "clear"), "ok");
  EXPECT_EQ(RunAdminCommand(*broker, "restart mode=clean"), "ok");

  EXPECT_EQ(RunAdminCommand(*broker, "fail-requests api=Nope error=NONE"),
            "error: unknown api 'Nope'");
  EXPECT_EQ(
      RunAdminCommand(*broker, "fail-requests api=Produce error=NOT_AN_ERROR"),
      "error: unknown error 'NOT_AN_ERROR'");
  EXPECT_EQ(RunAdminCommand(*broker, "latency"), "error: missing ms=");
  EXPECT_EQ(RunAdminCommand(*broker, "down ms=10 extra=1"),
            "error: unknown argument extra=");
  EXPECT_EQ(RunAdminCommand(*broker, "restart mode=sideways"),
            "error: mode must be clean, crash or power-loss");
  EXPECT_EQ(RunAdminCommand(*broker, "frobnicate"),
            "error: unknown command 'frobnicate' (try help)");
  EXPECT_EQ(RunAdminCommand(*broker, "drop-produce-responses count"),
            "error: expected key=value, got 'count'");
}

}  // namespace
}  // namespace exactly::broker
