#include "sticky_partitioner.h"

#include <pybind11/pybind11.h>

namespace exactly::python {

namespace {
// Partitions of the one topic asked for, or 0 if the answer has none.
int32_t AskPartitionCount(rd_kafka_t* rk, rd_kafka_topic_t* rkt) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err;
  {
    pybind11::gil_scoped_release release;
    err = rd_kafka_metadata(rk, /*all_topics=*/0, rkt, &md,
                            StickyPartitioner::kMetadataTimeoutMs);
  }
  int32_t partitions = 0;
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md != nullptr &&
      md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    partitions = md->topics[0].partition_cnt;
  }
  if (md != nullptr) rd_kafka_metadata_destroy(md);
  return partitions;
}
}  // namespace

int32_t StickyPartitioner::ForChunk(rd_kafka_t* rk, rd_kafka_topic_t* rkt) {
  Count& c = counts_[rkt];
  const auto now = std::chrono::steady_clock::now();
  if (c.asked == std::chrono::steady_clock::time_point{} ||
      now - c.asked > kMaxAge) {
    // Also after a failure: not again before kMaxAge.
    c.asked = now;
    c.partitions = AskPartitionCount(rk, rkt);
  }
  if (c.partitions <= 0) return RD_KAFKA_PARTITION_UA;
  return std::uniform_int_distribution<int32_t>(0, c.partitions - 1)(random_);
}

}  // namespace exactly::python
