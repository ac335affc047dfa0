// Per-broker faults of a cluster (exactly/broker/cluster.h), each shown with
// a real client (librdkafka) and counted: a killed leader under an idempotent
// acks=all producer, a follower whose replication is paused, an isolated
// leader, and a power loss on one broker. Nothing here waits a fixed time:
// it polls for an outcome until a deadline, then asserts on it.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "support/kafka_client.h"
#include "support/raw_call.h"
#include "support/raw_connection.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::ConsumeAll;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RawConnection;
using ::exactly::testing::RdKafkaPtr;
using ::exactly::testing::TempDir;

// Waits (bounded) until `done` holds.
template <class Pred>
bool Eventually(Pred done, int seconds = 20) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < give_up) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// The values a producer was told are stored, and how many failed. Delivery
// reports run on the thread that polls the producer (this test's).
struct Acknowledged {
  std::vector<std::string> values;
  int failed = 0;
  int last_error = 0;

  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m,
                         void* opaque) {
    auto* self = static_cast<Acknowledged*>(opaque);
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++self->failed;
      self->last_error = m->err;
      return;
    }
    self->values.emplace_back(static_cast<const char*>(m->payload), m->len);
  }
};

// An idempotent acks=all producer reporting into `acked`.
RdKafkaPtr IdempotentProducer(const std::string& servers, Acknowledged* acked) {
  return NewClient(RD_KAFKA_PRODUCER,
                   {{"bootstrap.servers", servers},
                    {"enable.idempotence", "true"},
                    {"acks", "all"},
                    {"linger.ms", "2"},
                    {"retry.backoff.ms", "20"}},
                   &Acknowledged::OnDelivery, acked);
}

// Sends "<prefix>-<i>" for i in [0, count) and waits for every report.
void ProduceAndFlush(rd_kafka_t* producer, const std::string& topic,
                     const std::string& prefix, int count) {
  for (int i = 0; i < count; ++i)
    ASSERT_EQ(ProduceOne(producer, topic, 0, "k", prefix + std::to_string(i)),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(producer, 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

// The data records' values of `topic`[0] as `broker` holds them.
std::vector<std::string> ValuesOn(Broker& broker, const std::string& topic) {
  std::vector<std::string> values;
  auto log = broker.ReadLog(topic, 0);
  if (!log.ok()) return values;
  for (const LoggedBatch& b : *log)
    if (!b.control)
      for (const LoggedRecord& r : b.records)
        values.push_back(r.value.value_or(""));
  return values;
}

int64_t LogEnd(Broker& broker, const std::string& topic) {
  auto o = broker.Offsets(topic, 0);
  return o.ok() ? o->log_end_offset : -1;
}

bool InIsr(const PartitionLeadership& p, int32_t node) {
  return std::find(p.isr.begin(), p.isr.end(), node) != p.isr.end();
}

bool HistoryMentions(Broker& broker, const std::string& what) {
  for (const std::string& line : broker.faults().History())
    if (line.find(what) != std::string::npos) return true;
  return false;
}

// Every acknowledged value read back once: a value read twice is a
// duplicate, one not read a loss.
void ExpectEachReadOnce(const std::vector<std::string>& acknowledged,
                        const std::vector<testing::ConsumedRecord>& read) {
  std::map<std::string, int> times;
  for (const auto& r : read) ++times[r.value];
  int lost = 0;
  int duplicated = 0;
  for (const std::string& v : acknowledged) {
    if (times[v] == 0) ++lost;
    if (times[v] > 1) ++duplicated;
  }
  EXPECT_EQ(lost, 0) << "acknowledged records lost, of " << acknowledged.size();
  EXPECT_EQ(duplicated, 0) << "acknowledged records read more than once";
}

class ClusterFaultsTest : public ::testing::Test {
 protected:
  void StartCluster(ClusterOptions o = {}) {
    o.brokers = 3;
    o.broker.verbose = getenv("CLUSTER_VERBOSE") != nullptr;
    auto cluster = Cluster::Start(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }
  PartitionLeadership Describe(const std::string& topic) {
    auto p = cluster_->DescribePartition(topic, 0);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : PartitionLeadership{};
  }
  // bootstrap.servers of every broker but `node`.
  std::string AllBut(int32_t node) {
    std::string servers;
    for (int32_t id = 1; id <= cluster_->size(); ++id) {
      if (id == node) continue;
      if (!servers.empty()) servers += ",";
      servers += cluster_->broker(id).bootstrap_servers();
    }
    return servers;
  }
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(ClusterFaultsTest,
       KillingTheLeaderUnderAcksAllLosesAndDuplicatesNothing) {
  StartCluster();
  ASSERT_TRUE(
      cluster_->CreateTopic("kill", 1, 3, {{"min.insync.replicas", "2"}}).ok());
  const PartitionLeadership before = Describe("kill");
  ASSERT_EQ(before.isr.size(), 3u);
  Acknowledged acked;
  RdKafkaPtr producer =
      IdempotentProducer(cluster_->bootstrap_servers(), &acked);
  ASSERT_TRUE(producer);
  constexpr int kRecords = 3000;
  for (int i = 0; i < kRecords; ++i) {
    if (i == kRecords / 3) {
      // Kill the leader once it has acknowledged some, with more in flight.
      ASSERT_TRUE(Eventually([&] {
        rd_kafka_poll(producer.get(), 1);
        return acked.values.size() >= 200;
      }));
      ASSERT_TRUE(cluster_->Kill(before.leader).ok());
    }
    ASSERT_EQ(
        ProduceOne(producer.get(), "kill", 0, "k", "v" + std::to_string(i)),
        RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ASSERT_EQ(rd_kafka_flush(producer.get(), 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(acked.failed, 0)
      << rd_kafka_err2str(static_cast<rd_kafka_resp_err_t>(acked.last_error));
  EXPECT_EQ(acked.values.size(), static_cast<size_t>(kRecords));

  const PartitionLeadership after = Describe("kill");
  EXPECT_NE(after.leader, before.leader);
  EXPECT_TRUE(InIsr(before, after.leader)) << "the new leader was in sync";
  EXPECT_FALSE(InIsr(after, before.leader));
  EXPECT_FALSE(cluster_->broker(before.leader).running());
  EXPECT_TRUE(HistoryMentions(cluster_->broker(before.leader), "killed"));
  ExpectEachReadOnce(acked.values,
                     ConsumeAll(AllBut(before.leader), "kill", 1,
                                "read_committed", acked.values.size()));

  // Started again, it registers and catches up as a follower.
  ASSERT_TRUE(
      cluster_->Restart(before.leader, Broker::RestartMode::kCrash).ok());
  EXPECT_TRUE(Eventually([&] {
    return InIsr(Describe("kill"), before.leader);
  })) << "the restarted broker never rejoined the ISR";
  EXPECT_EQ(Describe("kill").leader, after.leader);
  EXPECT_EQ(ValuesOn(cluster_->broker(before.leader), "kill"),
            ValuesOn(cluster_->broker(after.leader), "kill"));
}

TEST_F(ClusterFaultsTest, APausedFollowerLeavesTheIsrAndRejoinsWhenResumed) {
  ClusterOptions o;
  o.broker.replica_lag_time_max_ms = 300;
  StartCluster(o);
  ASSERT_TRUE(cluster_->CreateTopic("pause", 1, 3).ok());
  const PartitionLeadership placement = Describe("pause");
  const int32_t leader = placement.leader;
  const int32_t follower = placement.replicas.back();
  ASSERT_NE(follower, leader);
  ASSERT_TRUE(cluster_->PauseReplication(follower).ok());
  EXPECT_TRUE(HistoryMentions(cluster_->broker(follower), "paused"));

  Acknowledged acked;
  RdKafkaPtr producer =
      IdempotentProducer(cluster_->bootstrap_servers(), &acked);
  ASSERT_TRUE(producer);
  // acks=all waits until the paused follower has left the ISR.
  ProduceAndFlush(producer.get(), "pause", "a", 200);
  EXPECT_EQ(acked.values.size(), 200u);
  ASSERT_TRUE(Eventually([&] { return !InIsr(Describe("pause"), follower); }))
      << "the paused follower stayed in the ISR";
  ProduceAndFlush(producer.get(), "pause", "b", 200);
  EXPECT_EQ(acked.values.size(), 400u);
  EXPECT_EQ(LogEnd(cluster_->broker(leader), "pause"), 400);
  EXPECT_EQ(LogEnd(cluster_->broker(follower), "pause"), 0)
      << "paused before the first record, it copied some";
  EXPECT_EQ(Describe("pause").isr.size(), 2u);

  ASSERT_TRUE(cluster_->ResumeReplication(follower).ok());
  ASSERT_TRUE(Eventually([&] { return InIsr(Describe("pause"), follower); }))
      << "the resumed follower never rejoined the ISR";
  EXPECT_EQ(ValuesOn(cluster_->broker(follower), "pause"),
            ValuesOn(cluster_->broker(leader), "pause"));
  EXPECT_EQ(ValuesOn(cluster_->broker(follower), "pause").size(), 400u);
}

// A follower paused while the leader deletes records it never copied
// (DeleteRecords past its log end) starts over at the leader's log start when
// it resumes, instead of asking forever for offsets the leader no longer
// has, and rejoins the ISR holding exactly what the leader holds.
TEST_F(ClusterFaultsTest, AFollowerBehindTheLeadersLogStartStartsOverThere) {
  ClusterOptions o;
  o.broker.replica_lag_time_max_ms = 300;
  StartCluster(o);
  ASSERT_TRUE(cluster_->CreateTopic("behind", 1, 3).ok());
  const PartitionLeadership placement = Describe("behind");
  const int32_t leader = placement.leader;
  const int32_t follower = placement.replicas.back();
  ASSERT_TRUE(cluster_->PauseReplication(follower).ok());
  Acknowledged acked;
  RdKafkaPtr producer =
      IdempotentProducer(cluster_->bootstrap_servers(), &acked);
  ASSERT_TRUE(producer);
  ProduceAndFlush(producer.get(), "behind", "a", 100);
  ASSERT_EQ(acked.values.size(), 100u);
  ASSERT_TRUE(Eventually([&] { return !InIsr(Describe("behind"), follower); }));
  ASSERT_EQ(LogEnd(cluster_->broker(follower), "behind"), 0);

  protocol::DeleteRecordsRequest request;
  request.timeout_ms = 5000;
  auto& t = request.topics.emplace_back();
  t.name = "behind";
  t.partitions.push_back({.index = 0, .offset = 80});
  auto deleted = testing::Call<protocol::DeleteRecordsResponse>(
      cluster_->broker(leader).port(), 1, request);
  ASSERT_EQ(deleted.topics.size(), 1u);
  ASSERT_EQ(deleted.topics[0].partitions[0].error_code, 0);

  ASSERT_TRUE(cluster_->ResumeReplication(follower).ok());
  ASSERT_TRUE(Eventually([&] { return InIsr(Describe("behind"), follower); }))
      << "the follower never caught up from the leader's log start";
  auto offsets = cluster_->broker(follower).Offsets("behind", 0);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->log_start_offset, 80);
  EXPECT_EQ(offsets->log_end_offset, 100);
  // The same batches as the leader (the batch holding offset 80 whole, as on
  // the leader, whose log start falls inside it).
  EXPECT_EQ(ValuesOn(cluster_->broker(follower), "behind"),
            ValuesOn(cluster_->broker(leader), "behind"));
}

TEST_F(ClusterFaultsTest, AnIsolatedLeaderLosesItsLeadershipAndRejoinsHealed) {
  StartCluster();
  ASSERT_TRUE(cluster_->CreateTopic("isolate", 1, 3).ok());
  Acknowledged acked;
  {
    RdKafkaPtr producer =
        IdempotentProducer(cluster_->bootstrap_servers(), &acked);
    ASSERT_TRUE(producer);
    ProduceAndFlush(producer.get(), "isolate", "a", 100);
  }
  ASSERT_EQ(acked.values.size(), 100u);
  const PartitionLeadership before = Describe("isolate");
  const int32_t old_leader = before.leader;
  Broker& isolated = cluster_->broker(old_leader);

  ASSERT_TRUE(cluster_->Isolate(old_leader).ok());
  const PartitionLeadership during = Describe("isolate");
  EXPECT_NE(during.leader, old_leader);
  EXPECT_NE(during.leader, -1);
  EXPECT_TRUE(InIsr(before, during.leader));
  EXPECT_FALSE(InIsr(during, old_leader));
  EXPECT_TRUE(isolated.running()) << "isolated, not stopped";
  EXPECT_FALSE(RawConnection(isolated.port()).connected())
      << "an isolated broker refuses connections";
  EXPECT_TRUE(HistoryMentions(isolated, "isolated"));

  // The survivors take writes; the isolated broker, cut off, copies none.
  {
    RdKafkaPtr producer = IdempotentProducer(AllBut(old_leader), &acked);
    ASSERT_TRUE(producer);
    ProduceAndFlush(producer.get(), "isolate", "b", 100);
  }
  ASSERT_EQ(acked.values.size(), 200u);
  EXPECT_EQ(LogEnd(cluster_->broker(during.leader), "isolate"), 200);
  EXPECT_EQ(LogEnd(isolated, "isolate"), 100);

  ASSERT_TRUE(cluster_->Heal(old_leader).ok());
  EXPECT_TRUE(RawConnection(isolated.port()).connected());
  ASSERT_TRUE(Eventually([&] {
    return InIsr(Describe("isolate"), old_leader);
  })) << "the healed broker never rejoined the ISR";
  EXPECT_EQ(Describe("isolate").leader, during.leader)
      << "it rejoins as a follower";
  EXPECT_EQ(ValuesOn(isolated, "isolate"),
            ValuesOn(cluster_->broker(during.leader), "isolate"));
  ExpectEachReadOnce(acked.values,
                     ConsumeAll(cluster_->bootstrap_servers(), "isolate", 1,
                                "read_committed", acked.values.size()));
}

TEST_F(ClusterFaultsTest, PowerLossOnOneBrokerLosesNothingAcknowledged) {
  TempDir dir;
  ClusterOptions o;
  o.broker.data_dir = dir.path();  // flush policy: never fsync (the default)
  StartCluster(o);
  ASSERT_TRUE(
      cluster_->CreateTopic("power", 1, 3, {{"min.insync.replicas", "2"}})
          .ok());
  Acknowledged acked;
  RdKafkaPtr producer =
      IdempotentProducer(cluster_->bootstrap_servers(), &acked);
  ASSERT_TRUE(producer);
  ProduceAndFlush(producer.get(), "power", "a", 500);
  ASSERT_EQ(acked.values.size(), 500u);
  const int32_t old_leader = Describe("power").leader;
  Broker& lost = cluster_->broker(old_leader);
  ASSERT_EQ(LogEnd(lost, "power"), 500);

  // Paused, so that what survived the power loss can be counted before it
  // copies the rest back from the new leader.
  ASSERT_TRUE(cluster_->PauseReplication(old_leader).ok());
  ASSERT_TRUE(
      cluster_->Restart(old_leader, Broker::RestartMode::kPowerLoss).ok());
  EXPECT_TRUE(HistoryMentions(lost, "power loss"));
  EXPECT_LT(LogEnd(lost, "power"), 500)
      << "a power loss keeps only what was fsynced, and nothing was";
  const int32_t new_leader = Describe("power").leader;
  EXPECT_NE(new_leader, old_leader);
  EXPECT_NE(new_leader, -1);
  ProduceAndFlush(producer.get(), "power", "b", 500);
  EXPECT_EQ(acked.failed, 0);
  EXPECT_EQ(acked.values.size(), 1000u);

  ASSERT_TRUE(cluster_->ResumeReplication(old_leader).ok());
  ASSERT_TRUE(Eventually([&] { return InIsr(Describe("power"), old_leader); }))
      << "the broker that lost power never rejoined the ISR";
  EXPECT_EQ(ValuesOn(lost, "power"),
            ValuesOn(cluster_->broker(new_leader), "power"));
  ExpectEachReadOnce(acked.values,
                     ConsumeAll(cluster_->bootstrap_servers(), "power", 1,
                                "read_committed", acked.values.size()));
}

TEST_F(ClusterFaultsTest, ReplicationLatencyAboveTheLagTimeDropsAFollower) {
  ClusterOptions o;
  o.broker.replica_lag_time_max_ms = 200;
  StartCluster(o);
  ASSERT_TRUE(cluster_->CreateTopic("slow", 1, 3).ok());
  const PartitionLeadership placement = Describe("slow");
  const int32_t follower = placement.replicas.back();
  ASSERT_NE(follower, placement.leader);
  ASSERT_TRUE(cluster_->SetReplicationLatency(follower, 2000).ok());
  Acknowledged acked;
  RdKafkaPtr producer =
      IdempotentProducer(cluster_->bootstrap_servers(), &acked);
  ASSERT_TRUE(producer);
  // Writes keep coming; the slow follower cannot keep up within the lag time.
  int sent = 0;
  EXPECT_TRUE(Eventually([&] {
    ProduceOne(producer.get(), "slow", 0, "k", "v" + std::to_string(sent++));
    rd_kafka_poll(producer.get(), 0);
    return !InIsr(Describe("slow"), follower);
  })) << "a follower 2 s behind stayed in the ISR";
  ASSERT_TRUE(cluster_->SetReplicationLatency(follower, 0).ok());
  ASSERT_EQ(rd_kafka_flush(producer.get(), 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(acked.values.size(), static_cast<size_t>(sent));
  EXPECT_TRUE(Eventually([&] { return InIsr(Describe("slow"), follower); }))
      << "without the latency the follower never rejoined";
  EXPECT_TRUE(HistoryMentions(cluster_->broker(follower), "latency"));
}

TEST_F(ClusterFaultsTest, FaultsNameAnExistingRunningBroker) {
  StartCluster();
  EXPECT_TRUE(absl::IsInvalidArgument(cluster_->Kill(0)));
  EXPECT_TRUE(absl::IsInvalidArgument(cluster_->Isolate(4)));
  EXPECT_TRUE(absl::IsInvalidArgument(cluster_->PauseReplication(-1)));
  ASSERT_TRUE(cluster_->Kill(2).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(cluster_->Kill(2)));
  EXPECT_TRUE(absl::IsFailedPrecondition(cluster_->Isolate(2)));
  ASSERT_TRUE(cluster_->Restart(2, Broker::RestartMode::kClean).ok());
  EXPECT_TRUE(cluster_->broker(2).running());
}

}  // namespace
}  // namespace exactly::broker
