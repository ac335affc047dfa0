// acks=all, as Kafka's DelayedProduce: a produce appended on a leader whose
// partition has followers is answered only once the high watermark passes
// what it appended (every in-sync replica holds it), or with
// REQUEST_TIMED_OUT at the request's timeout, or with
// NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR has shrunk below
// min.insync.replicas by then, or NOT_LEADER_OR_FOLLOWER when this broker
// lost the leadership meanwhile. It parks on its partitions and is woken
// whenever one's high watermark or role changes.
#ifndef EXACTLY_BROKER_REPLICATION_DELAYED_PRODUCE_H_
#define EXACTLY_BROKER_REPLICATION_DELAYED_PRODUCE_H_

#include <asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "cluster/broker_state.h"
#include "cluster/partition.h"
#include "protocol/error_code.h"

namespace exactly::broker {

class DelayedProduce : public PartitionWaiter,
                       public std::enable_shared_from_this<DelayedProduce> {
 public:
  // One partition the produce appended to, and the offset the high watermark
  // must reach (its log end right after the append).
  struct Wait {
    std::string topic;
    int32_t partition = 0;
    int64_t required_offset = 0;
    protocol::ErrorCode outcome = protocol::ErrorCode::kNone;
    bool done = false;
  };
  // Called once, with each wait's outcome.
  using Done = absl::AnyInvocable<void(const std::vector<Wait>& waits)>;

  DelayedProduce(BrokerState& b, std::vector<Wait> waits, int32_t timeout_ms,
                 Done done);
  // Completes at once if it can; parks otherwise.
  void Start();
  bool OnPartitionChanged() override { return !TryComplete(false); }

 private:
  bool TryComplete(bool timed_out);

  BrokerState& b_;
  std::vector<Wait> waits_;
  int32_t timeout_ms_;
  Done done_;
  asio::steady_timer timer_;
  bool finished_ = false;
};

// Whether a produce with acks=all on `partition` must wait for followers.
bool NeedsReplicaAcks(const Partition& partition);

// The replicas that count for acks=all: the ISR of a replicated partition's
// leader, the broker alone otherwise.
size_t InSyncReplicaCount(const Partition& partition);

// The in-sync replicas an acks=all write on `partition` needs: the topic's
// min.insync.replicas (or the broker's default), capped at the replication
// factor, as Kafka 3.7+ caps it (tests/kafka/test_min_insync_replicas.py
// shows Apache Kafka answering acks=all with RF 1 and min.insync.replicas 2).
size_t RequiredInSyncReplicas(const BrokerState& b, const Topic& topic,
                              const Partition& partition);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_DELAYED_PRODUCE_H_
