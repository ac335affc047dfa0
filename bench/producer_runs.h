// The producer runs sdk_bench and spool_bench both measure: raw librdkafka and
// exactly::Producer sending the same records to the same broker with the same
// librdkafka settings. Records/s from the first send to the last
// acknowledgement; connecting and learning metadata happen before, untimed.
#ifndef EXACTLY_BENCH_PRODUCER_RUNS_H_
#define EXACTLY_BENCH_PRODUCER_RUNS_H_

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "bench/bench_util.h"
#include "bench/raw_producer.h"
#include "exactly/producer.h"

namespace exactly::bench {

// exactly::Producer: Send `n` records round-robin over `partitions`, then
// Flush.
inline double SdkProduceRate(const std::string& bootstrap,
                             const std::string& topic, int64_t n,
                             int partitions, size_t value_bytes) {
  ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  options.properties = ProducerTuning();
  auto producer = Producer::Create(options);
  if (!producer.ok())
    Die("Producer::Create: " + std::string(producer.status().message()));
  Producer& p = **producer;
  const std::string value(value_bytes, 's');
  Record record{.topic = topic, .value = value, .partition = 0};
  if (!p.Send(record).ok() || !p.Flush(std::chrono::seconds(30)).ok())
    Die("sdk warm-up");
  Stopwatch watch;
  for (int64_t i = 0; i < n; ++i) {
    record.partition = static_cast<int32_t>(i % partitions);
    if (absl::Status s = p.Send(record); !s.ok())
      Die("Send: " + std::string(s.message()));
  }
  if (absl::Status s = p.Flush(std::chrono::seconds(120)); !s.ok()) {
    Die("Flush: " + std::string(s.message()));
  }
  const double seconds = watch.Seconds();
  if (p.stats().delivered != static_cast<uint64_t>(n + 1))
    Die("sdk: records missing");
  return static_cast<double>(n) / seconds;
}

}  // namespace exactly::bench

#endif  // EXACTLY_BENCH_PRODUCER_RUNS_H_
