// SDK-internal access to a producer's librdkafka handle, for the spool's
// drainer.
#ifndef EXACTLY_SDK_SRC_PRODUCER_PRODUCER_ACCESS_H_
#define EXACTLY_SDK_SRC_PRODUCER_PRODUCER_ACCESS_H_

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "exactly/producer.h"
#include "exactly/transactional_producer.h"
#include "producer/producer_core.h"

namespace exactly::internal {

class ProducerAccess {
 public:
  static rd_kafka_t* Handle(Producer& p) { return p.core_->rk(); }
  static rd_kafka_t* Handle(TransactionalProducer& p) { return p.core_->rk(); }
  // After producing on Handle(p) directly: frees finished reports on this
  // thread, as Send does.
  static void ReleaseFinishedReports(Producer& p) {
    p.core_->ReleaseFinishedReports();
  }
  // After queueing `n` records on Handle(p) directly: counts them as sent
  // (ProducerStats::sent).
  static void CountSent(Producer& p, uint64_t n) { p.core_->CountSent(n); }
};

// Fetches `topic`'s metadata on the handle. librdkafka otherwise learns of a
// topic it has not produced to before on its next periodic scan (up to a
// second later), which would hold up the first transaction after every
// restart.
inline absl::Status WarmUpTopic(rd_kafka_t* rk, const std::string& topic,
                                std::chrono::milliseconds timeout) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rkt == nullptr) return absl::InvalidArgumentError("bad topic " + topic);
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk, 0, rkt, &md, static_cast<int>(timeout.count()));
  rd_kafka_topic_destroy(rkt);
  if (md != nullptr) rd_kafka_metadata_destroy(md);
  return StatusFromCode(err, "metadata of " + topic);
}

// The same for several topics, in one metadata request.
template <class Topics>
absl::Status WarmUpTopics(rd_kafka_t* rk, const Topics& topics,
                          std::chrono::milliseconds timeout) {
  if (topics.empty()) return absl::OkStatus();
  std::vector<rd_kafka_topic_t*> handles;
  for (const std::string& topic : topics) {
    // Known locally from now on: a metadata request for "locally known
    // topics" asks for it.
    if (rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr))
      handles.push_back(rkt);
  }
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk, 0, nullptr, &md, static_cast<int>(timeout.count()));
  if (md != nullptr) rd_kafka_metadata_destroy(md);
  for (rd_kafka_topic_t* rkt : handles) rd_kafka_topic_destroy(rkt);
  return StatusFromCode(err, "metadata of the producer's topics");
}

}  // namespace exactly::internal

#endif  // EXACTLY_SDK_SRC_PRODUCER_PRODUCER_ACCESS_H_
