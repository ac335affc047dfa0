// One broker's metrics at one scrape, as plain data: what the Prometheus
// exposition is built from, and what a test can assert on without HTTP.
#ifndef EXACTLY_BROKER_METRICS_BROKER_SAMPLE_H_
#define EXACTLY_BROKER_METRICS_BROKER_SAMPLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metrics/broker_counters.h"

namespace exactly::broker {

struct PartitionSample {
  std::string topic;
  int32_t partition = 0;
  int64_t log_start_offset = 0;
  int64_t log_end_offset = 0;
  int64_t high_watermark = 0;
  int64_t last_stable_offset = 0;
  // In a cluster only: whether this broker leads the partition, and (on the
  // leader) the ISR size as the controller last decided it.
  std::optional<bool> leader;
  std::optional<int32_t> isr_size;
};

struct BrokerSample {
  int32_t node_id = 1;
  bool running = false;
  BrokerCounters::Totals counters;
  std::map<std::string, int64_t> faults;  // by kind (Faults::InjectedCounts)
  // Empty when the broker is down or its loop did not answer in time.
  std::vector<PartitionSample> partitions;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_METRICS_BROKER_SAMPLE_H_
