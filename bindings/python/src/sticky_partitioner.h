// Where send_batch puts a chunk of records that have no key and no partition.
// librdkafka's own partitioner runs record by record and takes the
// partition's lock for each one; a chunk handed to rd_kafka_produce_batch
// with one partition is queued under a single lock, which more than doubles
// what a Python thread can send. So every keyless chunk (up to 1,024 records)
// goes to one partition chosen at random, as Kafka's sticky partitioner
// (KIP-480) does for keyless records; over many chunks the partitions fill
// evenly. The partition count comes from a metadata request, asked again
// after kMaxAge so that added partitions come into use.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_STICKY_PARTITIONER_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_STICKY_PARTITIONER_H_

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <random>

namespace exactly::python {

class StickyPartitioner {
 public:
  static constexpr std::chrono::seconds kMaxAge{30};
  // How long the metadata request may block a send_batch (GIL released).
  static constexpr int kMetadataTimeoutMs = 1000;

  // A partition of `rkt` for the next chunk, or RD_KAFKA_PARTITION_UA
  // (librdkafka partitions record by record) while the count is unknown.
  int32_t ForChunk(rd_kafka_t* rk, rd_kafka_topic_t* rkt);

  // Before the topic handles are destroyed.
  void Forget() { counts_.clear(); }

 private:
  struct Count {
    int32_t partitions = 0;  // 0: unknown (the last request failed)
    std::chrono::steady_clock::time_point asked;
  };

  std::map<rd_kafka_topic_t*, Count> counts_;
  std::minstd_rand random_{std::random_device{}()};
};

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_STICKY_PARTITIONER_H_
