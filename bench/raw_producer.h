// Raw librdkafka producing, as every producer benchmark measures it: the
// shared producer settings and the produce loop that serves and checks every
// delivery report. Records/s from the first send to the last acknowledgement;
// connecting and learning metadata happen before, untimed.
#ifndef EXACTLY_BENCH_RAW_PRODUCER_H_
#define EXACTLY_BENCH_RAW_PRODUCER_H_

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "bench/bench_util.h"

namespace exactly::bench {

// The producer settings every run uses (besides bootstrap.servers /
// transactional.id).
inline std::map<std::string, std::string> ProducerTuning() {
  return {{"acks", "all"},
          {"enable.idempotence", "true"},
          {"max.in.flight.requests.per.connection", "5"},
          {"linger.ms", "5"},
          {"queue.buffering.max.messages", "1000000"}};
}

// Delivery reports counted by a dr_msg_cb (opaque: the counter).
struct DeliveryCounter {
  std::atomic<int64_t> ok{0}, failed{0};
};
inline void CountDelivery(rd_kafka_t*, const rd_kafka_message_t* m,
                          void* opaque) {
  auto* c = static_cast<DeliveryCounter*>(opaque);
  (m->err == RD_KAFKA_RESP_ERR_NO_ERROR ? c->ok : c->failed).fetch_add(1);
}

// Raw librdkafka: produce `n` records round-robin over `partitions`, serving
// delivery reports every 1,000 records on the same thread, then flush.
// `overrides` replace or add to ProducerTuning() (e.g. acks=1).
inline double RawProduceRate(
    const std::string& bootstrap, const std::string& topic, int64_t n,
    int partitions, size_t value_bytes,
    const std::map<std::string, std::string>& overrides = {}) {
  DeliveryCounter counter;
  auto props = ProducerTuning();
  for (const auto& [k, v] : overrides) props[k] = v;
  props["bootstrap.servers"] = bootstrap;
  RdKafka p = NewClient(RD_KAFKA_PRODUCER, props, CountDelivery, &counter);
  const std::string value(value_bytes, 'r');
  ProduceOrDie(p.get(), topic, 0, value);
  if (rd_kafka_flush(p.get(), 30000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die("warm-up flush");
  Stopwatch watch;
  for (int64_t i = 0; i < n; ++i) {
    ProduceOrDie(p.get(), topic, static_cast<int32_t>(i % partitions), value);
    if (i % 1000 == 999) rd_kafka_poll(p.get(), 0);  // serve delivery reports
  }
  if (rd_kafka_flush(p.get(), 120000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die("flush timed out");
  const double seconds = watch.Seconds();
  if (counter.failed.load() != 0 || counter.ok.load() != n + 1)
    Die("raw: records failed");
  return static_cast<double>(n) / seconds;
}

}  // namespace exactly::bench

#endif  // EXACTLY_BENCH_RAW_PRODUCER_H_
