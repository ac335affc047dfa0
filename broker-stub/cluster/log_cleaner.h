// The log cleaner: compacts the partitions of topics with cleanup.policy
// "compact" (users' compacted topics, and the coordinators' own
// __consumer_offsets and __transaction_state), as Kafka's LogCleaner does.
//
// Every log.cleaner.backoff.ms (BrokerOptions::log_cleaner_backoff_ms) it
// looks at each compacted partition this broker holds, leader or follower
// (each replica cleans its own log, as in Kafka). The cleanable range runs from
// the log start to the first uncleanable offset: the active segment's base,
// the last stable offset (never an open transaction, never above the high
// watermark) and min.compaction.lag.ms. A partition is cleaned when the part
// of that range written since its last clean is at least
// min.cleanable.dirty.ratio of it, when its oldest uncleaned record is older
// than max.compaction.lag.ms, or when a tombstone or marker's delete horizon
// has passed. What a clean keeps is log/compaction.h's business.
#ifndef EXACTLY_BROKER_CLUSTER_LOG_CLEANER_H_
#define EXACTLY_BROKER_CLUSTER_LOG_CLEANER_H_

#include <asio/steady_timer.hpp>
#include <cstdint>

namespace exactly::broker {

class BrokerState;

class LogCleaner {
 public:
  explicit LogCleaner(BrokerState& b);
  LogCleaner(const LogCleaner&) = delete;
  LogCleaner& operator=(const LogCleaner&) = delete;

  // Runs a pass now and then every backoff.
  void Start();
  // One pass over every compacted partition; returns how many it cleaned.
  int CleanDirtyPartitions();

 private:
  void Arm();

  BrokerState& b_;
  asio::steady_timer timer_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_LOG_CLEANER_H_
