// MetricsEndpoint on prometheus-cpp: its Exposer serves HTTP on its own
// threads and, at each scrape, asks a Collectable that samples every source.
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <exception>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "metrics/metrics_endpoint.h"
#include "metrics/prometheus_families.h"

namespace exactly::broker {

namespace {

class SamplingCollectable : public prometheus::Collectable {
 public:
  explicit SamplingCollectable(std::vector<SampleSource> sources)
      : sources_(std::move(sources)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<BrokerSample> samples;
    samples.reserve(sources_.size());
    for (const SampleSource& source : sources_) samples.push_back(source());
    return ToMetricFamilies(samples);
  }

 private:
  std::vector<SampleSource> sources_;
};

class PrometheusEndpoint : public MetricsEndpoint {
 public:
  PrometheusEndpoint(std::unique_ptr<prometheus::Exposer> exposer,
                     std::shared_ptr<SamplingCollectable> collectable,
                     uint16_t port)
      : collectable_(std::move(collectable)),
        exposer_(std::move(exposer)),
        port_(port) {}

  uint16_t port() const override { return port_; }

 private:
  // The exposer holds the collectable weakly; it is declared after it, so
  // it stops serving before the collectable goes.
  std::shared_ptr<SamplingCollectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  uint16_t port_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& host, uint16_t port, std::vector<SampleSource> sources) {
  const std::string address = absl::StrCat(host, ":", port);
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    // One thread: scrapes are rare, and each one waits on the brokers' loops.
    exposer = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": ", e.what()));
  }
  std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(
        absl::StrCat("metrics endpoint on ", address, " is not listening"));
  }
  auto collectable = std::make_shared<SamplingCollectable>(std::move(sources));
  exposer->RegisterCollectable(collectable);
  return std::unique_ptr<MetricsEndpoint>(
      new PrometheusEndpoint(std::move(exposer), std::move(collectable),
                             static_cast<uint16_t>(ports.front())));
}

}  // namespace exactly::broker
