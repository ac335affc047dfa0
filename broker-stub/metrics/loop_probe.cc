#include "metrics/loop_probe.h"

#include <asio/post.hpp>
#include <condition_variable>
#include <memory>

#include "metrics/partition_sampler.h"

namespace exactly::broker {

namespace {

// Shared by the waiting scrape and the task on the loop, so that either may
// go first without the other's memory going away.
struct Pending {
  std::mutex mu;
  std::condition_variable done;
  std::optional<std::vector<PartitionSample>> result;
};

}  // namespace

void LoopProbe::Attach(asio::io_context* io, BrokerState* state) {
  std::lock_guard<std::mutex> lock(mu_);
  io_ = io;
  state_ = state;
}

void LoopProbe::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  io_ = nullptr;
  state_ = nullptr;
}

std::optional<std::vector<PartitionSample>> LoopProbe::SamplePartitions(
    std::chrono::milliseconds timeout) {
  auto pending = std::make_shared<Pending>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (io_ == nullptr) return std::nullopt;
    // The state outlives the loop thread, which is the only one to run this.
    asio::post(*io_, [pending, state = state_] {
      std::vector<PartitionSample> partitions =
          exactly::broker::SamplePartitions(*state);
      std::lock_guard<std::mutex> lock(pending->mu);
      pending->result = std::move(partitions);
      pending->done.notify_one();
    });
  }
  std::unique_lock<std::mutex> lock(pending->mu);
  pending->done.wait_for(lock, timeout,
                         [&] { return pending->result.has_value(); });
  return std::move(pending->result);
}

}  // namespace exactly::broker
