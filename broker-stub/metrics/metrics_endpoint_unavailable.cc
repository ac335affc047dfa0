// MetricsEndpoint in a build without prometheus-cpp: asking for one is an
// error the user can act on, not a silently missing endpoint.
#include "absl/status/status.h"
#include "metrics/metrics_endpoint.h"

namespace exactly::broker {

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string&, uint16_t, std::vector<SampleSource>) {
  return absl::FailedPreconditionError(
      "metrics endpoint unavailable: exactly was built without prometheus-cpp "
      "(apt-get install prometheus-cpp-dev nlohmann-json3-dev, then rebuild "
      "with -DEXACTLY_PROMETHEUS=ON)");
}

}  // namespace exactly::broker
