// The broker's Prometheus endpoint: GET /metrics over HTTP, served on its own
// thread, one for a broker or for a whole cluster (each broker a source,
// labelled broker="<node id>"). Built on prometheus-cpp when the build found
// it (EXACTLY_PROMETHEUS); without it Start fails, saying so.
#ifndef EXACTLY_BROKER_METRICS_METRICS_ENDPOINT_H_
#define EXACTLY_BROKER_METRICS_METRICS_ENDPOINT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "metrics/broker_sample.h"

namespace exactly::broker {

// Called on the endpoint's thread at every scrape.
using SampleSource = std::function<BrokerSample()>;

class MetricsEndpoint {
 public:
  // Listens on host:port (port 0 picks a free one).
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& host, uint16_t port,
      std::vector<SampleSource> sources);
  virtual ~MetricsEndpoint() = default;
  virtual uint16_t port() const = 0;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_METRICS_METRICS_ENDPOINT_H_
