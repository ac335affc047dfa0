// The SDK's statistics for Prometheus (the optional library
// exactly_prometheus, on prometheus-cpp). A PrometheusCollector is a
// prometheus::Collectable: each scrape reads the stats of the clients
// registered with it (Producer, TransactionalProducer, SpooledProducer,
// Processor) and returns them as metric families named exactly_*, in base
// units (seconds, bytes), counters ending in _total, each sample labelled
// with the name the client was registered under (client="...").
//
//   auto collector = std::make_shared<exactly::PrometheusCollector>();
//   exposer.RegisterCollectable(collector);  // a prometheus::Exposer
//   auto spool = exactly::SpooledProducer::Create(opts);
//   auto registration = collector->Register("orders", **spool);
//   // ... the registration ends before *spool is destroyed.
//
// Lifetime: a Registration unregisters its client when it is destroyed (or
// Reset()), waiting for a scrape that is reading the client to finish; after
// that the collector never touches the client again. So destroy (or Reset)
// the Registration before the client is closed or destroyed: declare it
// after the client, or Reset() it first. A Registration may outlive the
// collector (it then does nothing).
//
// librdkafka's own statistics: pass StatisticsFor(name) as the options'
// on_statistics and set "statistics.interval.ms"; each report is summarised
// (queues, bytes and messages sent, broker round trips, consumer lag and
// high watermarks per partition) and exported as exactly_librdkafka_*.
//
// The README's "Metrics" section lists every metric.
#ifndef EXACTLY_PROMETHEUS_H_
#define EXACTLY_PROMETHEUS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exactly/processor.h"
#include "exactly/producer.h"
#include "exactly/spool.h"
#include "exactly/transactional_producer.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace exactly {

class PrometheusCollector : public prometheus::Collectable {
 public:
  struct State;  // shared with the Registrations

  // Keeps a client registered while it lives; move-only.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration() { Reset(); }

    // Unregisters now (idempotent).
    void Reset();

   private:
    friend class PrometheusCollector;
    Registration(std::weak_ptr<State> state, uint64_t id)
        : state_(std::move(state)), id_(id) {}
    std::weak_ptr<State> state_;
    uint64_t id_ = 0;
  };

  PrometheusCollector();
  ~PrometheusCollector() override;

  // Registers a client under `client`, the value of its "client" label.
  // ALREADY_EXISTS if a client of the same kind is registered under that
  // name (their samples would collide); INVALID_ARGUMENT if it is empty.
  absl::StatusOr<Registration> Register(std::string client,
                                        const Producer& producer);
  // Its TransactionStats and its ProducerStats.
  absl::StatusOr<Registration> Register(std::string client,
                                        const TransactionalProducer& producer);
  absl::StatusOr<Registration> Register(std::string client,
                                        const SpooledProducer& spool);
  absl::StatusOr<Registration> Register(std::string client,
                                        const Processor& processor);

  // A callback for the options' on_statistics (ProducerOptions,
  // ConsumerOptions, ProcessorOptions, SpoolOptions::producer): each report
  // replaces the summary kept for (client, the report's "type"), which the
  // scrapes export with the label client=`client`. It holds the collector
  // weakly (reports after the collector is gone are dropped). A summary
  // stays until ForgetStatistics(client).
  StatisticsCallback StatisticsFor(std::string client);
  void ForgetStatistics(const std::string& client);

  // One scrape: the current stats of every registered client.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace exactly

#endif  // EXACTLY_PROMETHEUS_H_
