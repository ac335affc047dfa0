// Lets a scrape thread read a broker's partitions on the broker's event loop
// and wait for the answer a bounded time: a loop that is busy, stopping or
// gone costs a scrape its partition gauges, never a hang or a deadlock.
#ifndef EXACTLY_BROKER_METRICS_LOOP_PROBE_H_
#define EXACTLY_BROKER_METRICS_LOOP_PROBE_H_

#include <asio/io_context.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include "metrics/broker_sample.h"

namespace exactly::broker {

class BrokerState;

class LoopProbe {
 public:
  // The broker calls Attach once its loop runs and Detach before it stops
  // the loop; between them `io` and `state` stay alive.
  void Attach(asio::io_context* io, BrokerState* state);
  void Detach();

  // The partitions as the loop sees them, or nullopt when the broker is
  // detached or its loop did not answer within `timeout`.
  std::optional<std::vector<PartitionSample>> SamplePartitions(
      std::chrono::milliseconds timeout);

 private:
  std::mutex mu_;  // guards io_ and state_ against Detach
  asio::io_context* io_ = nullptr;
  BrokerState* state_ = nullptr;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_METRICS_LOOP_PROBE_H_
