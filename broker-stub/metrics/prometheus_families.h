// Turns broker samples into Prometheus metric families: the names and labels
// the endpoint exposes (docs/architecture.md lists them).
#ifndef EXACTLY_BROKER_METRICS_PROMETHEUS_FAMILIES_H_
#define EXACTLY_BROKER_METRICS_PROMETHEUS_FAMILIES_H_

#include <prometheus/metric_family.h>

#include <vector>

#include "metrics/broker_sample.h"

namespace exactly::broker {

std::vector<prometheus::MetricFamily> ToMetricFamilies(
    const std::vector<BrokerSample>& brokers);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_METRICS_PROMETHEUS_FAMILIES_H_
