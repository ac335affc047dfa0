// What the broker counts as it happens: requests by API, transactions by
// outcome. Incremented on the event-loop thread with relaxed atomics, so a
// scrape reads them from its own thread without stopping the loop. One
// instance lives as long as the Broker, so a restart does not reset them.
#ifndef EXACTLY_BROKER_METRICS_BROKER_COUNTERS_H_
#define EXACTLY_BROKER_METRICS_BROKER_COUNTERS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

namespace exactly::broker {

class BrokerCounters {
 public:
  // Kafka's API keys stay below this; a key above it is not counted.
  static constexpr int16_t kApiKeys = 128;

  void CountRequest(int16_t api_key);
  // A transaction reached CompleteCommit or CompleteAbort.
  void CountTransactionEnd(bool committed);
  // The coordinator began aborting a transaction that outlived its timeout.
  void CountTransactionTimeout();

  struct Totals {
    std::vector<std::pair<int16_t, int64_t>> requests;  // keys seen, by key
    int64_t committed = 0;
    int64_t aborted = 0;
    int64_t timed_out = 0;
  };
  Totals Read() const;

 private:
  std::array<std::atomic<int64_t>, kApiKeys> requests_{};
  std::atomic<int64_t> committed_{0};
  std::atomic<int64_t> aborted_{0};
  std::atomic<int64_t> timed_out_{0};
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_METRICS_BROKER_COUNTERS_H_
