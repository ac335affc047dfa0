#include "metrics/broker_counters.h"

namespace exactly::broker {

void BrokerCounters::CountRequest(int16_t api_key) {
  if (api_key < 0 || api_key >= kApiKeys) return;
  requests_[static_cast<size_t>(api_key)].fetch_add(1,
                                                    std::memory_order_relaxed);
}

void BrokerCounters::CountTransactionEnd(bool committed) {
  (committed ? committed_ : aborted_).fetch_add(1, std::memory_order_relaxed);
}

void BrokerCounters::CountTransactionTimeout() {
  timed_out_.fetch_add(1, std::memory_order_relaxed);
}

BrokerCounters::Totals BrokerCounters::Read() const {
  Totals t;
  for (int16_t key = 0; key < kApiKeys; ++key) {
    int64_t n =
        requests_[static_cast<size_t>(key)].load(std::memory_order_relaxed);
    if (n > 0) t.requests.emplace_back(key, n);
  }
  t.committed = committed_.load(std::memory_order_relaxed);
  t.aborted = aborted_.load(std::memory_order_relaxed);
  t.timed_out = timed_out_.load(std::memory_order_relaxed);
  return t;
}

}  // namespace exactly::broker
