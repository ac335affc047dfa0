// Built against the installed SDK and its Prometheus component only. It
// needs no broker: a producer (never connected) registered with the
// collector shows up in the Prometheus text, and is gone once unregistered.
#include <cstdio>
#include <string>

#include "exactly/exactly.h"
#include "exactly/prometheus.h"
#include "prometheus/text_serializer.h"

int main() {
  exactly::ProducerOptions options;
  options.bootstrap_servers = "127.0.0.1:1";  // nothing listens: never used
  auto producer = exactly::Producer::Create(options);
  if (!producer.ok()) {
    std::fprintf(stderr, "Producer::Create: %s\n",
                 std::string(producer.status().message()).c_str());
    return 1;
  }
  exactly::PrometheusCollector collector;
  auto registration = collector.Register("install-check", **producer);
  if (!registration.ok()) {
    std::fprintf(stderr, "Register: %s\n",
                 std::string(registration.status().message()).c_str());
    return 1;
  }
  const std::string text =
      prometheus::TextSerializer().Serialize(collector.Collect());
  const std::string want =
      "exactly_producer_delivered_records_total{client=\"install-check\"} 0";
  if (text.find(want) == std::string::npos) {
    std::fprintf(stderr, "no \"%s\" in:\n%s", want.c_str(), text.c_str());
    return 1;
  }
  registration->Reset();
  if (!collector.Collect().empty()) {
    std::fprintf(stderr, "samples left after Reset()\n");
    return 1;
  }
  std::printf("exactly::prometheus works\n");
  return 0;
}
