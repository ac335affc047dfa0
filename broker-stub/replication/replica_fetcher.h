// The follower side of replication, as Kafka's ReplicaFetcherThread: for each
// leader this broker follows partitions of, one loop that sends Fetch requests
// carrying this broker's node id as replica id (over a PeerClient, the same
// protocol and sockets as any client), appends what comes back
// (AppendAsFollower), takes up the leader's high watermark, and asks again
// once the append is committed, so the leader never counts as replicated what
// this broker's store does not hold.
//
// A partition that starts following (a new leader, or a new epoch of the same
// one) is first truncated: the loop asks the leader where this replica's
// latest epoch ends on its log (OffsetForLeaderEpoch, KIP-101/279) and cuts
// what the leader does not have (log_truncation.h) before it fetches.
#ifndef EXACTLY_BROKER_REPLICATION_REPLICA_FETCHER_H_
#define EXACTLY_BROKER_REPLICATION_REPLICA_FETCHER_H_

#include <asio/steady_timer.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "cluster/broker_state.h"
#include "peer/peer_client.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/offset_for_leader_epoch.h"

namespace exactly::broker {

// Kafka's replica.fetch.wait.max.ms, replica.fetch.max.bytes and
// replica.fetch.response.max.bytes defaults.
inline constexpr int32_t kReplicaFetchWaitMaxMs = 500;
inline constexpr int32_t kReplicaFetchMaxBytes = 1 << 20;
inline constexpr int32_t kReplicaFetchResponseMaxBytes = 10 << 20;
// What a fetch loop waits after a fetch that brought only errors (the leader
// moved, or is unreachable) before it asks again. Kafka's
// replica.fetch.backoff.ms is 1000; a test cluster learns its new leaders from
// the controller at once, so waiting long only slows failover.
inline constexpr int32_t kReplicaFetchBackoffMs = 100;
// How often a paused fetch loop (Faults::PauseReplication) looks again.
inline constexpr int32_t kReplicaPausedPollMs = 20;

class ReplicaFetchers {
 public:
  explicit ReplicaFetchers(BrokerState& b) : b_(b) {}
  ~ReplicaFetchers();
  ReplicaFetchers(const ReplicaFetchers&) = delete;
  ReplicaFetchers& operator=(const ReplicaFetchers&) = delete;

  // Copies `topic`[`partition`] from broker `leader`, which leads it at
  // `leader_epoch`, at host:port from now on (instead of from any other
  // leader).
  void Follow(const std::string& topic, int32_t partition, int32_t leader,
              int32_t leader_epoch, const std::string& host, int32_t port);
  // Stops copying it (this broker leads it now, or no longer holds it).
  void Unfollow(const std::string& topic, int32_t partition);

 private:
  using PartitionKey = std::pair<std::string, int32_t>;
  struct Following {
    int32_t leader = -1;
    int32_t leader_epoch = -1;
    // Cut to what the leader has (or found nothing to cut): fetches may go.
    bool truncated = false;
  };
  struct Source {
    std::unique_ptr<PeerClient> client;
    std::set<PartitionKey> partitions;
    bool fetching = false;  // a fetch is out, or its append not yet committed
    bool asking_epochs = false;  // an OffsetForLeaderEpoch is out
    // Armed while the loop waits (back-off, pause, injected latency).
    std::unique_ptr<asio::steady_timer> delay;
  };

  void FetchFrom(int32_t leader);
  // Moves the log start of `p` up to its leader's, as far as it is committed
  // here.
  void FollowLeaderLogStart(Partition& p);
  // Sends OffsetForLeaderEpoch for the partitions of `source` not yet
  // truncated; returns whether any are waiting for it.
  bool AskEpochEnds(int32_t leader, Source& source);
  void OnEpochEnds(int32_t leader,
                   std::map<PartitionKey, std::pair<int32_t, int32_t>> asked,
                   absl::StatusOr<protocol::OffsetForLeaderEpochResponse> r);
  // The fetch out to `leader` is done: fetch again after `delay_ms` (0: now).
  void FetchAfter(int32_t leader, int32_t delay_ms);
  void WaitThenFetch(int32_t leader, Source& source, int32_t delay_ms);
  void OnResponse(int32_t leader,
                  absl::StatusOr<protocol::FetchResponse> response);

  BrokerState& b_;
  std::map<int32_t, Source> sources_;  // by leader node id
  std::map<PartitionKey, Following> following_;
  // Callbacks that outlive this object (a commit, a response) check it.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_REPLICA_FETCHER_H_
