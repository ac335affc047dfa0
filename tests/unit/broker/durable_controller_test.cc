// The controller's state on disk (controller/controller_state_file.h): a
// controller opened again on its folder has the same topics, replicas,
// leaders, epochs, ISRs and configs, hands out no producer id twice, and lets
// its brokers take up their old roles as they register. A damaged file is a
// clear DataLoss, never a crash or a wrong cluster.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "controller/controller_state_file.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::testing::ElementsAre;

std::shared_ptr<Controller> OpenIn(const std::string& dir) {
  absl::StatusOr<std::shared_ptr<Controller>> c = Controller::Open(
      ControllerOptions{.default_replication_factor = 3, .state_dir = dir});
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : nullptr;
}

// Three brokers, topic "t" with one partition on 1, 2, 3 and a config; broker
// 1 fenced, so 2 leads at epoch 1 with ISR {2, 3}.
void BuildCluster(Controller& c) {
  for (int32_t id : {1, 2, 3}) c.RegisterBroker(id, "127.0.0.1", 9000 + id);
  NewTopic t{.name = "t",
             .partitions = -1,
             .assignments = std::vector<ReplicaList>{{1, 2, 3}},
             .configs = {{"min.insync.replicas", "2"}}};
  ASSERT_TRUE(c.CreateTopic(t).ok());
  c.SetBrokerConfigs("", {{"log.retention.ms", "3600000"}});
  c.SetBrokerConfigs("2", {{"message.max.bytes", "2048"}});
  c.FenceBroker(1);
}

TEST(DurableControllerTest, ReopenedControllerHasTheSamePlacement) {
  testing::TempDir dir;
  int64_t version = 0;
  int64_t last_id = 0;
  {
    auto c = OpenIn(dir.path());
    ASSERT_NE(c, nullptr);
    BuildCluster(*c);
    absl::StatusOr<Controller::ProducerIdBlock> block =
        c->AllocateProducerIds();
    ASSERT_TRUE(block.ok());
    last_id = block->first + block->count - 1;
    version = c->metadata()->version;
  }
  auto c = OpenIn(dir.path());
  ASSERT_NE(c, nullptr);
  auto m = c->metadata();
  EXPECT_EQ(m->version, version);
  const PartitionState* p = m->partition("t", 0);
  ASSERT_NE(p, nullptr);
  EXPECT_THAT(p->replicas, ElementsAre(1, 2, 3));
  EXPECT_EQ(p->leader, 2);
  EXPECT_EQ(p->leader_epoch, 1);
  EXPECT_THAT(p->isr, ElementsAre(2, 3));
  EXPECT_EQ(m->topic("t")->configs.at("min.insync.replicas"), "2");
  // The dynamic broker configs, too.
  EXPECT_EQ(m->broker_configs.at("").at("log.retention.ms"), "3600000");
  // No broker runs yet: all are fenced until they register.
  EXPECT_TRUE(m->LiveBrokers().empty());

  absl::StatusOr<Controller::ProducerIdBlock> next = c->AllocateProducerIds();
  ASSERT_TRUE(next.ok());
  EXPECT_GT(next->first, last_id) << "a producer id handed out twice";

  // The leader registers again: it leads at the same epoch, nothing moved.
  c->RegisterBroker(2, "127.0.0.1", 9102);
  p = c->metadata()->partition("t", 0);
  EXPECT_EQ(p->leader, 2);
  EXPECT_EQ(p->leader_epoch, 1);
  EXPECT_EQ(c->metadata()->broker(2)->port, 9102) << "its new address";
}

TEST(DurableControllerTest, BrokersThatNeverReturnLoseTheirLeaderships) {
  testing::TempDir dir;
  {
    auto c = OpenIn(dir.path());
    ASSERT_NE(c, nullptr);
    BuildCluster(*c);
  }
  auto c = OpenIn(dir.path());
  ASSERT_NE(c, nullptr);
  c->RegisterBroker(1, "127.0.0.1", 9001);
  c->RegisterBroker(3, "127.0.0.1", 9003);
  // Broker 2, the leader, is not part of the restarted cluster.
  c->FenceUnregistered();
  const PartitionState* p = c->metadata()->partition("t", 0);
  EXPECT_EQ(p->leader, 3) << "the live in-sync replica";
  EXPECT_EQ(p->leader_epoch, 2);
  EXPECT_THAT(p->isr, ElementsAre(3));
}

TEST(DurableControllerTest, DeletedTopicsStayDeleted) {
  testing::TempDir dir;
  {
    auto c = OpenIn(dir.path());
    ASSERT_NE(c, nullptr);
    BuildCluster(*c);
    c->DeleteTopic("t");
  }
  auto c = OpenIn(dir.path());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->metadata()->topic("t"), nullptr);
}

TEST(DurableControllerTest, AnEmptyFolderIsANewCluster) {
  testing::TempDir dir;
  auto c = OpenIn(dir.Sub("not-yet"));
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->metadata()->topics.empty());
  EXPECT_TRUE(c->metadata()->brokers.empty());
}

TEST(DurableControllerTest, AFailedSaveChangesNothing) {
  testing::TempDir dir;
  const std::string state = dir.Sub("state");
  Controller c(ControllerOptions{.state_dir = state});
  c.RegisterBroker(1, "127.0.0.1", 9001);
  ASSERT_EQ(c.metadata()->LiveBrokers().size(), 1u);
  // The state folder becomes a file: nothing can be saved there any more.
  std::filesystem::remove_all(state);
  std::ofstream(state) << "x";
  c.RegisterBroker(2, "127.0.0.1", 9002);
  EXPECT_EQ(c.metadata()->LiveBrokers().size(), 1u);
  ApiError e = c.CreateTopic({.name = "t", .partitions = 1});
  EXPECT_EQ(e.code, protocol::ErrorCode::kUnknownServerError) << e.message;
  EXPECT_EQ(c.metadata()->topic("t"), nullptr);
  EXPECT_FALSE(c.AllocateProducerIds().ok());
}

ClusterMetadata SampleMetadata() {
  Controller c(ControllerOptions{.default_replication_factor = 3});
  BuildCluster(c);
  return *c.metadata();
}

TEST(ControllerStateFileTest, RoundTrips) {
  const ClusterMetadata m = SampleMetadata();
  absl::StatusOr<ControllerState> back =
      DecodeControllerState(EncodeControllerState(m, 4001));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->next_producer_id, 4001);
  EXPECT_EQ(back->metadata.version, m.version);
  EXPECT_EQ(back->metadata.brokers, m.brokers);
  EXPECT_EQ(back->metadata.broker_configs, m.broker_configs);
  EXPECT_EQ(back->metadata.broker_configs.at("2").at("message.max.bytes"),
            "2048");
  ASSERT_EQ(back->metadata.topics.size(), 1u);
  const TopicPlacement& t = *back->metadata.topics.at("t");
  EXPECT_EQ(t.configs, m.topic("t")->configs);
  const PartitionState& p = t.partitions.at(0);
  const PartitionState& want = m.topic("t")->partitions.at(0);
  EXPECT_EQ(p.replicas, want.replicas);
  EXPECT_EQ(p.isr, want.isr);
  EXPECT_EQ(p.leader, want.leader);
  EXPECT_EQ(p.leader_epoch, want.leader_epoch);
  EXPECT_EQ(p.partition_epoch, want.partition_epoch);
}

// Every truncation and every single flipped byte is refused with DataLoss
// (the CRC and the bounds-checked decoder), never misread and never a crash.
TEST(ControllerStateFileTest, DamageIsDataLoss) {
  const std::string good = EncodeControllerState(SampleMetadata(), 1);
  for (size_t n = 0; n < good.size(); ++n) {
    absl::StatusOr<ControllerState> s =
        DecodeControllerState(std::string_view(good).substr(0, n));
    EXPECT_TRUE(absl::IsDataLoss(s.status())) << "truncated to " << n;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    absl::StatusOr<ControllerState> s = DecodeControllerState(bad);
    EXPECT_TRUE(absl::IsDataLoss(s.status())) << "byte " << i << " flipped";
  }
  EXPECT_TRUE(absl::IsDataLoss(DecodeControllerState(good + "x").status()));
}

TEST(ControllerStateFileTest, ADamagedFileStopsTheControllerFromOpening) {
  testing::TempDir dir;
  ASSERT_TRUE(SaveControllerState(dir.path(), SampleMetadata(), 1).ok());
  const auto path = std::filesystem::path(dir.path()) / "controller.state";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  absl::StatusOr<std::shared_ptr<Controller>> c =
      Controller::Open(ControllerOptions{.state_dir = dir.path()});
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsDataLoss(c.status())) << c.status();
  EXPECT_THAT(std::string(c.status().message()),
              ::testing::HasSubstr("controller.state"));
}

}  // namespace
}  // namespace exactly::broker
