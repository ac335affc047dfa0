// Reads every partition's offsets (and, in a cluster, its leadership) from a
// broker's state. Runs on the broker's event-loop thread, which owns it.
#ifndef EXACTLY_BROKER_METRICS_PARTITION_SAMPLER_H_
#define EXACTLY_BROKER_METRICS_PARTITION_SAMPLER_H_

#include <vector>

#include "metrics/broker_sample.h"

namespace exactly::broker {

class BrokerState;

std::vector<PartitionSample> SamplePartitions(BrokerState& state);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_METRICS_PARTITION_SAMPLER_H_
