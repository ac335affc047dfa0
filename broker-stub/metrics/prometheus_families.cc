#include "metrics/prometheus_families.h"

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "protocol/api_key.h"

namespace exactly::broker {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// Families in a fixed order, each created at its first sample, so that a
// scrape lists every family once whatever the number of brokers.
class Families {
 public:
  void Counter(const std::string& name, const std::string& help, Labels labels,
               double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = value;
    Family(name, help, MetricType::Counter).metric.push_back(std::move(m));
  }
  void Gauge(const std::string& name, const std::string& help, Labels labels,
             double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = value;
    Family(name, help, MetricType::Gauge).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> Take() && { return std::move(families_); }

 private:
  MetricFamily& Family(const std::string& name, const std::string& help,
                       MetricType type) {
    auto [it, added] = index_.emplace(name, families_.size());
    if (added) families_.push_back(MetricFamily{name, help, type, {}});
    return families_[it->second];
  }
  std::map<std::string, size_t> index_;
  std::vector<MetricFamily> families_;
};

Labels With(const Labels& base, std::string name, std::string value) {
  Labels out = base;
  out.push_back({std::move(name), std::move(value)});
  return out;
}

void AddPartitions(const BrokerSample& b, const Labels& broker, Families& f) {
  for (const PartitionSample& p : b.partitions) {
    Labels l = With(With(broker, "topic", p.topic), "partition",
                    absl::StrCat(p.partition));
    f.Gauge("exactly_broker_partition_log_start_offset",
            "First offset the partition's log holds.", l,
            static_cast<double>(p.log_start_offset));
    f.Gauge("exactly_broker_partition_log_end_offset",
            "Offset the next record appended to the partition gets.", l,
            static_cast<double>(p.log_end_offset));
    f.Gauge("exactly_broker_partition_high_watermark",
            "Offset below which records are replicated and readable.", l,
            static_cast<double>(p.high_watermark));
    f.Gauge("exactly_broker_partition_last_stable_offset",
            "Offset below which read_committed consumers may read.", l,
            static_cast<double>(p.last_stable_offset));
    if (p.leader) {
      f.Gauge("exactly_broker_partition_leader",
              "1 when this broker leads the partition, 0 when it follows.", l,
              *p.leader ? 1 : 0);
    }
    if (p.isr_size) {
      f.Gauge("exactly_broker_partition_isr_size",
              "In-sync replicas of a partition this broker leads.", l,
              *p.isr_size);
    }
  }
}

}  // namespace

std::vector<MetricFamily> ToMetricFamilies(
    const std::vector<BrokerSample>& brokers) {
  Families f;
  for (const BrokerSample& b : brokers) {
    const Labels broker = {{"broker", absl::StrCat(b.node_id)}};
    f.Gauge("exactly_broker_up", "1 while the broker serves, 0 when stopped.",
            broker, b.running ? 1 : 0);
    for (const auto& [key, n] : b.counters.requests) {
      f.Counter("exactly_broker_requests_total", "Requests received, by API.",
                With(broker, "api", std::string(protocol::ApiKeyName(key))),
                static_cast<double>(n));
    }
    f.Counter("exactly_broker_transactions_total",
              "Transactions this broker coordinated to their end, by outcome.",
              With(broker, "outcome", "commit"),
              static_cast<double>(b.counters.committed));
    f.Counter("exactly_broker_transactions_total",
              "Transactions this broker coordinated to their end, by outcome.",
              With(broker, "outcome", "abort"),
              static_cast<double>(b.counters.aborted));
    f.Counter("exactly_broker_transactions_timed_out_total",
              "Transactions aborted because they outlived their timeout "
              "(also counted as outcome=\"abort\").",
              broker, static_cast<double>(b.counters.timed_out));
    for (const auto& [kind, n] : b.faults) {
      f.Counter("exactly_broker_faults_injected_total",
                "Faults injected into this broker, by kind.",
                With(broker, "fault", kind), static_cast<double>(n));
    }
    AddPartitions(b, broker, f);
  }
  return std::move(f).Take();
}

}  // namespace exactly::broker
