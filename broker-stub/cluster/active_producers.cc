#include "cluster/active_producers.h"

#include <algorithm>

namespace exactly::broker {

std::vector<ActiveProducer> ActiveProducers(const Partition& partition) {
  std::vector<ActiveProducer> out;
  const auto& open = partition.transactions().open();
  for (const auto& [id, entry] : partition.producers().entries()) {
    ActiveProducer a;
    a.producer_id = id;
    a.producer_epoch = entry.epoch;
    a.last_sequence = entry.last_sequence();
    // Kafka also stamps it with the last marker's time; entries here keep
    // only their batches' timestamps.
    if (!entry.batches.empty()) {
      a.last_timestamp = entry.batches.back().max_timestamp;
    }
    a.coordinator_epoch = entry.coordinator_epoch;
    if (auto it = open.find(id); it != open.end()) {
      a.current_txn_start_offset = it->second;
    }
    out.push_back(a);
  }
  std::sort(out.begin(), out.end(),
            [](const ActiveProducer& x, const ActiveProducer& y) {
              return x.producer_id < y.producer_id;
            });
  return out;
}

}  // namespace exactly::broker
