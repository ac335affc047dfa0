// The spool run spool_bench and crc_bench both measure: one thread calls
// SendAsync with `batch` records at a time, round-robin over the partitions,
// not waiting for each fsync (the spool's room bounds what is in flight),
// until all `n` are durable; every completion must be OK.
#ifndef EXACTLY_BENCH_SPOOL_RUNS_H_
#define EXACTLY_BENCH_SPOOL_RUNS_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "exactly/spool.h"

namespace exactly::bench {

// Sends `n` records of `value` to `topic` with SendAsync(`batch`) and returns
// once every one is durable. `after_sending` runs once the last call has
// returned, before the wait (e.g. to read the sending thread's CPU time).
template <typename AfterSending>
void SendAsyncUntilDurable(SpooledProducer& spool, const std::string& topic,
                           const std::string& value, int64_t n, int batch,
                           int partitions, AfterSending after_sending) {
  std::vector<Record> records(static_cast<size_t>(batch),
                              Record{.topic = topic, .value = value});
  std::atomic<int64_t> durable{0};
  std::atomic<int64_t> failed{0};
  std::mutex mu;
  std::condition_variable all_durable;
  for (int64_t first = 0; first < n; first += batch) {
    const int64_t count = std::min<int64_t>(batch, n - first);
    for (int64_t i = 0; i < count; ++i) {
      records[static_cast<size_t>(i)].partition =
          static_cast<int32_t>((first + i) % partitions);
    }
    absl::Status s = spool.SendAsync(
        std::span<const Record>(records.data(), static_cast<size_t>(count)),
        [&, count](const absl::Status& outcome) {
          if (!outcome.ok()) failed.fetch_add(1);
          if (durable.fetch_add(count) + count == n) {
            std::lock_guard<std::mutex> lock(mu);
            all_durable.notify_all();
          }
        });
    if (!s.ok()) Die("spool SendAsync: " + std::string(s.message()));
  }
  after_sending();
  {
    std::unique_lock<std::mutex> lock(mu);
    all_durable.wait(lock, [&] { return durable.load() == n; });
  }
  if (failed.load() != 0) Die("spool: a SendAsync failed");
}

inline void SendAsyncUntilDurable(SpooledProducer& spool,
                                  const std::string& topic,
                                  const std::string& value, int64_t n,
                                  int batch, int partitions) {
  SendAsyncUntilDurable(spool, topic, value, n, batch, partitions, [] {});
}

}  // namespace exactly::bench

#endif  // EXACTLY_BENCH_SPOOL_RUNS_H_
