#include "replication/replica_fetcher.h"

#include "cluster/appender.h"
#include "protocol/error_code.h"
#include "replication/follower_append.h"
#include "replication/high_watermark.h"
#include "util/logging.h"

namespace exactly::broker {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;

ReplicaFetchers::~ReplicaFetchers() { *alive_ = false; }

void ReplicaFetchers::Follow(const std::string& topic, int32_t partition,
                             int32_t leader, const std::string& host,
                             int32_t port) {
  const PartitionKey key{topic, partition};
  auto current = leaders_.find(key);
  if (current != leaders_.end() && current->second != leader)
    Unfollow(topic, partition);
  Source& source = sources_[leader];
  if (!source.client || source.client->host() != host ||
      source.client->port() != port) {
    source.client =
        PeerClient::Create(b_.io(), host, static_cast<uint16_t>(port),
                           {.client_id = "exactly-replica-" +
                                         std::to_string(b_.options().node_id)});
    source.fetching = false;
  }
  source.partitions.insert(key);
  leaders_[key] = leader;
  FetchFrom(leader);
}

void ReplicaFetchers::Unfollow(const std::string& topic, int32_t partition) {
  auto it = leaders_.find({topic, partition});
  if (it == leaders_.end()) return;
  auto source = sources_.find(it->second);
  if (source != sources_.end()) {
    source->second.partitions.erase(it->first);
    if (source->second.partitions.empty()) sources_.erase(source);
  }
  leaders_.erase(it);
}

void ReplicaFetchers::FetchAfter(int32_t leader, int32_t delay_ms) {
  auto it = sources_.find(leader);
  if (it == sources_.end()) return;
  Source& source = it->second;
  source.fetching = false;
  if (delay_ms <= 0) {
    FetchFrom(leader);
    return;
  }
  if (source.delay) return;  // already waiting
  source.delay = std::make_unique<asio::steady_timer>(
      b_.io(), std::chrono::milliseconds(delay_ms));
  std::weak_ptr<bool> alive = alive_;
  source.delay->async_wait([this, alive, leader](const std::error_code& ec) {
    if (ec || alive.expired()) return;
    auto s = sources_.find(leader);
    if (s == sources_.end()) return;
    s->second.delay.reset();
    FetchFrom(leader);
  });
}

void ReplicaFetchers::FetchFrom(int32_t leader) {
  auto it = sources_.find(leader);
  if (it == sources_.end() || it->second.fetching || it->second.delay) return;
  Source& source = it->second;
  if (b_.faults().replication_paused()) {
    FetchAfter(leader, kReplicaPausedPollMs);
    return;
  }
  FetchRequest request;
  request.replica_id = b_.options().node_id;
  request.max_wait_ms = kReplicaFetchWaitMaxMs;
  request.min_bytes = 1;
  request.max_bytes = kReplicaFetchResponseMaxBytes;
  std::map<std::string, FetchRequest::Topic*> by_topic;
  for (const auto& [topic, index] : source.partitions) {
    const Partition* p = b_.FindPartition(topic, index);
    if (p == nullptr) continue;
    FetchRequest::Topic*& t = by_topic[topic];
    if (t == nullptr) {
      t = &request.topics.emplace_back();
      t->name = topic;
    }
    FetchRequest::Partition& fp = t->partitions.emplace_back();
    fp.index = index;
    fp.current_leader_epoch = p->replication().leader_epoch;
    fp.fetch_offset = p->log().log_end_offset();
    fp.log_start_offset = p->log().log_start_offset();
    fp.max_bytes = kReplicaFetchMaxBytes;
  }
  if (request.topics.empty()) return;
  source.fetching = true;
  std::weak_ptr<bool> alive = alive_;
  // The client is shared with the callback's capture list only through
  // `source`, which this object owns.
  source.client->Send<FetchRequest, FetchResponse>(
      11, request,
      [this, alive, leader](absl::StatusOr<FetchResponse> response,
                            SharedBuffer frame) {
        if (alive.expired()) return;
        // The appended batches are copied out of `frame` before it goes.
        (void)frame;
        OnResponse(leader, std::move(response));
      });
}

void ReplicaFetchers::OnResponse(int32_t leader,
                                 absl::StatusOr<FetchResponse> response) {
  auto it = sources_.find(leader);
  if (it == sources_.end()) return;  // no partition follows it any more
  if (!response.ok()) {
    // The leader is unreachable: try again (the client waits its reconnect
    // back-off first) until the controller names another leader.
    LogDebug("replica fetch from broker ", leader, ": ",
             std::string(response.status().message()));
    FetchAfter(leader, kReplicaFetchBackoffMs);
    return;
  }
  std::vector<std::pair<std::string, int32_t>> appended;
  for (const FetchResponse::Topic& t : response->topics) {
    for (const FetchResponse::Partition& rp : t.partitions) {
      auto following = leaders_.find({t.name, rp.index});
      if (following == leaders_.end() || following->second != leader) continue;
      Partition* p = b_.FindPartition(t.name, rp.index);
      if (p == nullptr) continue;
      if (rp.error_code != 0) {
        // NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, ...: the controller's
        // next decision tells this broker whom to follow.
        LogDebug("replica fetch of ", t.name, "-", rp.index, " from broker ",
                 leader, ": ",
                 std::string(protocol::ErrorCodeName(rp.error_code)));
        continue;
      }
      FollowerAppendOutcome outcome =
          AppendAsFollower(b_, *p, rp.records.Contiguous());
      if (!outcome.error.ok())
        LogWarning("replicating ", t.name, "-", rp.index, " from broker ",
                   leader, ": ", outcome.error.message);
      p->replication().leader_high_watermark =
          std::max(p->replication().leader_high_watermark, rp.high_watermark);
      appended.emplace_back(t.name, rp.index);
    }
  }
  if (appended.empty()) {
    // Only errors: the controller's next decision says whom to follow.
    FetchAfter(leader, kReplicaFetchBackoffMs);
    return;
  }
  // Once the appends are in the store: they count as this broker's, the high
  // watermark moves, and the next fetch tells the leader so.
  std::weak_ptr<bool> alive = alive_;
  b_.commits().AfterCommit(
      [this, alive, leader,
       appended = std::move(appended)](const absl::Status&) {
        if (alive.expired()) return;
        for (const auto& [topic, index] : appended)
          if (Partition* p = b_.FindPartition(topic, index))
            PublishAppends(b_, *p);
        FetchAfter(leader, b_.faults().replication_latency_ms());
      });
}

}  // namespace exactly::broker
