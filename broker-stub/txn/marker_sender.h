// The transaction coordinator's side of markers in a cluster, as Kafka's
// TransactionMarkerChannelManager: a COMMIT or ABORT marker goes to the
// current leader of each partition of the transaction in a WriteTxnMarkers
// request (to this broker too, over its own port), and a marker for a group's
// offsets goes to the group's coordinator as the partition
// __consumer_offsets-<hash of the group>. A partition whose leader is
// unknown, offline, moving (NOT_LEADER_OR_FOLLOWER), not yet in sync
// (NOT_ENOUGH_REPLICAS...) or unreachable is tried again with the
// controller's newest metadata until it answers; `done` runs once every
// partition has acknowledged its marker, so the transaction completes only
// then. A partition of a deleted topic is dropped.
//
// Runs on the broker's event loop.
#ifndef EXACTLY_BROKER_TXN_MARKER_SENDER_H_
#define EXACTLY_BROKER_TXN_MARKER_SENDER_H_

#include <asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "cluster/broker_state.h"
#include "peer/peer_pool.h"

namespace exactly::broker {

struct TxnMarkers {
  std::string transactional_id;  // for the logs
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  bool commit = false;
  int32_t coordinator_epoch = 0;
  std::set<std::pair<std::string, int32_t>> partitions;  // topic, partition
  // Asked before every attempt: a coordinator that gave up the transaction
  // (another broker coordinates it now) stops sending; `done` never runs.
  std::function<bool()> still_wanted;
};

class MarkerSender {
 public:
  static constexpr int32_t kRetryBackoffMs = 50;

  MarkerSender(BrokerState& b, PeerPool& peers);
  ~MarkerSender();

  void Send(TxnMarkers markers, absl::AnyInvocable<void()> done);

 private:
  struct Pending {
    TxnMarkers markers;  // `partitions`: those not yet acknowledged
    absl::AnyInvocable<void()> done;
    int in_flight = 0;  // requests sent and not answered
    int attempts = 0;
  };
  void Attempt(const std::shared_ptr<Pending>& p);
  // After a request of `p` ended: done, or again later.
  void Settle(const std::shared_ptr<Pending>& p);
  void RetryLater(std::shared_ptr<Pending> p);

  BrokerState& b_;
  PeerPool& peers_;
  asio::steady_timer retry_timer_;
  bool retry_armed_ = false;
  std::vector<std::shared_ptr<Pending>> waiting_;  // for the retry timer
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_TXN_MARKER_SENDER_H_
