// One partition of a topic on this broker: its log, its producers' states, its
// transactions, and the delayed operations (long-poll fetches) waiting for it
// to grow.
#ifndef EXACTLY_BROKER_CLUSTER_PARTITION_H_
#define EXACTLY_BROKER_CLUSTER_PARTITION_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "log/compaction.h"
#include "log/partition_log.h"
#include "log/transaction_index.h"
#include "producer/producer_state.h"
#include "replication/partition_replication.h"

namespace exactly::broker {

// Something parked on a partition until its visible end moves (a long-poll
// fetch).
class PartitionWaiter {
 public:
  virtual ~PartitionWaiter() = default;
  // Returns whether to keep waiting on this partition.
  virtual bool OnPartitionChanged() = 0;
};

class Partition {
 public:
  Partition(std::string topic, uint32_t topic_id, int32_t index)
      : topic_(std::move(topic)), topic_id_(topic_id), index_(index) {}
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  const std::string& topic() const { return topic_; }
  uint32_t topic_id() const { return topic_id_; }
  int32_t index() const { return index_; }
  // The epoch of the partition's current leader, stamped on every batch this
  // broker appends as leader. A broker that is the whole cluster leads at
  // epoch 0 forever; in a cluster the controller moves it
  // (cluster/cluster_membership.cc).
  int32_t leader_epoch() const { return leader_epoch_; }
  void set_leader_epoch(int32_t epoch) { leader_epoch_ = epoch; }

  PartitionLog& log() { return log_; }
  const PartitionLog& log() const { return log_; }
  ProducerStateTable& producers() { return producers_; }
  const ProducerStateTable& producers() const { return producers_; }
  PartitionReplication& replication() { return replication_; }
  const PartitionReplication& replication() const { return replication_; }
  CleanerCheckpoint& cleaner() { return cleaner_; }
  const CleanerCheckpoint& cleaner() const { return cleaner_; }
  TransactionIndex& transactions() { return transactions_; }
  const TransactionIndex& transactions() const { return transactions_; }

  // The last stable offset: nothing at or above it may be shown to
  // read_committed readers.
  int64_t last_stable_offset() const {
    int64_t hwm = log_.high_watermark();
    auto first_open = transactions_.FirstUnstableOffset();
    return first_open ? std::min(*first_open, hwm) : hwm;
  }

  // Long-poll fetches park here until the partition's visible end moves. A
  // waiter that finished elsewhere (another partition woke it, or it timed out)
  // simply expires.
  void AddWaiter(std::weak_ptr<PartitionWaiter> waiter) {
    if (waiters_.size() >= prune_at_) {
      std::erase_if(waiters_, [](const auto& w) { return w.expired(); });
      prune_at_ = std::max<size_t>(64, 2 * waiters_.size());
    }
    waiters_.push_back(std::move(waiter));
  }
  void WakeWaiters() {
    if (waiters_.empty()) return;
    std::vector<std::weak_ptr<PartitionWaiter>> waiters;
    waiters.swap(waiters_);
    for (auto& weak : waiters) {
      if (auto w = weak.lock(); w && w->OnPartitionChanged())
        waiters_.push_back(std::move(weak));
    }
  }

 private:
  std::string topic_;
  uint32_t topic_id_;
  int32_t index_;
  int32_t leader_epoch_ = 0;
  PartitionLog log_;
  ProducerStateTable producers_;
  TransactionIndex transactions_;
  CleanerCheckpoint cleaner_;
  PartitionReplication replication_;
  std::vector<std::weak_ptr<PartitionWaiter>> waiters_;
  size_t prune_at_ = 64;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_PARTITION_H_
