// A test on a 3-broker Cluster of bundled brokers in this process, each with
// its own data dir (so a restart keeps its state; CLUSTER_VERBOSE=1 logs
// them), and FindCoordinator asked of one of its brokers.
#ifndef EXACTLY_TESTS_SUPPORT_CLUSTER_TEST_H_
#define EXACTLY_TESTS_SUPPORT_CLUSTER_TEST_H_

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "exactly/broker/cluster.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "support/raw_call.h"
#include "support/temp_dir.h"

namespace exactly::testing {

// FindCoordinator v1 asked of the broker at `port`: the coordinator's node
// id, or -1 on an error (a test failure unless `may_fail`).
inline int32_t FindCoordinatorAt(uint16_t port, int8_t key_type,
                                 const std::string& key,
                                 bool may_fail = false) {
  protocol::FindCoordinatorRequest request;
  request.key = key;
  request.key_type = key_type;
  auto response =
      Call<protocol::FindCoordinatorResponse>(port, /*version=*/1, request);
  if (!may_fail) {
    EXPECT_EQ(response.error_code, 0) << key;
  }
  return response.error_code == 0 ? response.node_id : -1;
}

// The live broker that coordinates `key` (a group or transactional id, by
// `key_type`) as the first running broker of `cluster` names it; -1 after
// 30 s.
inline int32_t AwaitLiveCoordinator(broker::Cluster& cluster, int8_t key_type,
                                    const std::string& key) {
  for (int i = 0; i < 600; ++i) {
    for (int32_t node = 1; node <= cluster.size(); ++node) {
      if (!cluster.broker(node).running()) continue;
      const int32_t named = FindCoordinatorAt(cluster.broker(node).port(),
                                              key_type, key, /*may_fail=*/true);
      if (named > 0 && cluster.broker(named).running()) return named;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

class ThreeBrokerClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker::ClusterOptions o{.brokers = 3};
    o.broker.data_dir = dir_.path();
    o.broker.verbose = std::getenv("CLUSTER_VERBOSE") != nullptr;
    auto cluster = broker::Cluster::Start(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    bootstrap_ = cluster_->bootstrap_servers();
  }

  uint16_t port(int32_t node) { return cluster_->broker(node).port(); }

  TempDir dir_;
  std::unique_ptr<broker::Cluster> cluster_;
  std::string bootstrap_;
};

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_CLUSTER_TEST_H_
