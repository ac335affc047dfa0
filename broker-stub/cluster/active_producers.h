// The producers a partition knows, as DescribeProducers (KIP-664) reports
// them: shared by the API's handler and Broker::DescribeProducers.
#ifndef EXACTLY_BROKER_CLUSTER_ACTIVE_PRODUCERS_H_
#define EXACTLY_BROKER_CLUSTER_ACTIVE_PRODUCERS_H_

#include <vector>

#include "cluster/partition.h"
#include "exactly/broker/broker.h"

namespace exactly::broker {

// Every producer entry of `partition`, by producer id.
std::vector<ActiveProducer> ActiveProducers(const Partition& partition);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_ACTIVE_PRODUCERS_H_
