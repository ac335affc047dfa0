#include "replication/replica_fetcher.h"

#include "cluster/appender.h"
#include "cluster/retention.h"
#include "protocol/error_code.h"
#include "replication/follower_append.h"
#include "replication/high_watermark.h"
#include "replication/log_truncation.h"
#include "util/logging.h"

namespace exactly::broker {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::OffsetForLeaderEpochRequest;
using protocol::OffsetForLeaderEpochResponse;

ReplicaFetchers::~ReplicaFetchers() { *alive_ = false; }

void ReplicaFetchers::Follow(const std::string& topic, int32_t partition,
                             int32_t leader, int32_t leader_epoch,
                             const std::string& host, int32_t port) {
  const PartitionKey key{topic, partition};
  auto current = following_.find(key);
  if (current != following_.end() && current->second.leader == leader &&
      current->second.leader_epoch == leader_epoch) {
    FetchFrom(leader);
    return;
  }
  if (current != following_.end()) Unfollow(topic, partition);
  Source& source = sources_[leader];
  if (!source.client || source.client->host() != host ||
      source.client->port() != port) {
    source.client =
        PeerClient::Create(b_.io(), host, static_cast<uint16_t>(port),
                           {.client_id = "exactly-replica-" +
                                         std::to_string(b_.options().node_id)});
    source.fetching = false;
    source.asking_epochs = false;
  }
  source.partitions.insert(key);
  following_[key] = {.leader = leader, .leader_epoch = leader_epoch};
  if (Partition* p = b_.FindPartition(topic, partition)) {
    // What an earlier leader reported says nothing about this one's log.
    p->replication().leader_high_watermark = p->log().high_watermark();
  }
  FetchFrom(leader);
}

void ReplicaFetchers::Unfollow(const std::string& topic, int32_t partition) {
  auto it = following_.find({topic, partition});
  if (it == following_.end()) return;
  auto source = sources_.find(it->second.leader);
  if (source != sources_.end()) {
    source->second.partitions.erase(it->first);
    if (source->second.partitions.empty()) sources_.erase(source);
  }
  following_.erase(it);
}

void ReplicaFetchers::FetchAfter(int32_t leader, int32_t delay_ms) {
  auto it = sources_.find(leader);
  if (it == sources_.end()) return;
  it->second.fetching = false;
  if (delay_ms <= 0) {
    FetchFrom(leader);
  } else {
    WaitThenFetch(leader, it->second, delay_ms);
  }
}

void ReplicaFetchers::WaitThenFetch(int32_t leader, Source& source,
                                    int32_t delay_ms) {
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
  if (it == sources_.end() || it->second.delay) return;
  Source& source = it->second;
  if (b_.faults().replication_paused()) {
    // A request still out re-arms the wait when it returns.
    if (!source.fetching && !source.asking_epochs)
      WaitThenFetch(leader, source, kReplicaPausedPollMs);
    return;
  }
  AskEpochEnds(leader, source);
  if (source.fetching) return;
  FetchRequest request;
  request.replica_id = b_.options().node_id;
  request.max_wait_ms = kReplicaFetchWaitMaxMs;
  request.min_bytes = 1;
  request.max_bytes = kReplicaFetchResponseMaxBytes;
  std::map<std::string, FetchRequest::Topic*> by_topic;
  for (const auto& [topic, index] : source.partitions) {
    const Partition* p = b_.FindPartition(topic, index);
    if (p == nullptr || !following_[{topic, index}].truncated) continue;
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
  if (b_.faults().replication_paused()) {
    // Paused while the fetch was out: what it brought is not copied, so that
    // nothing reaches a paused follower after the pause.
    FetchAfter(leader, kReplicaPausedPollMs);
    return;
  }
  std::vector<std::pair<std::string, int32_t>> appended;
  for (const FetchResponse::Topic& t : response->topics) {
    for (const FetchResponse::Partition& rp : t.partitions) {
      auto following = following_.find({t.name, rp.index});
      if (following == following_.end() || following->second.leader != leader ||
          !following->second.truncated)
        continue;
      Partition* p = b_.FindPartition(t.name, rp.index);
      if (p == nullptr) continue;
      if (rp.error_code == static_cast<int16_t>(ErrorCode::kOffsetOutOfRange)) {
        if (rp.log_start_offset > p->log().log_end_offset()) {
          // The leader deleted what this log needs next: start over where
          // the leader's log starts; the next fetch asks from there.
          RestartLogAt(b_, *p, rp.log_start_offset);
          continue;
        }
        // This log ends past the leader's: find where they part again.
        following->second.truncated = false;
        continue;
      }
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
      p->replication().leader_log_start_offset = std::max(
          p->replication().leader_log_start_offset, rp.log_start_offset);
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
        for (const auto& [topic, index] : appended) {
          if (Partition* p = b_.FindPartition(topic, index)) {
            PublishAppends(b_, *p);
            FollowLeaderLogStart(*p);
          }
        }
        FetchAfter(leader, b_.faults().replication_latency_ms());
      });
}

void ReplicaFetchers::FollowLeaderLogStart(Partition& p) {
  // As Kafka's follower: up to its own high watermark, so that it never
  // drops what it has not yet confirmed the leader has.
  const int64_t start = std::min(p.replication().leader_log_start_offset,
                                 p.log().high_watermark());
  if (start > p.log().log_start_offset()) DeleteRecordsBefore(b_, p, start);
}

bool ReplicaFetchers::AskEpochEnds(int32_t leader, Source& source) {
  OffsetForLeaderEpochRequest request;
  request.replica_id = b_.options().node_id;
  std::map<PartitionKey, std::pair<int32_t, int32_t>> asked;
  bool waiting = false;
  for (const PartitionKey& key : source.partitions) {
    Following& f = following_[key];
    if (f.truncated) continue;
    Partition* p = b_.FindPartition(key.first, key.second);
    if (p == nullptr) continue;
    std::optional<EpochEntry> latest = p->replication().epochs.latest();
    if (!latest && p->log().log_end_offset() == p->log().log_start_offset()) {
      f.truncated = true;  // nothing here can disagree with the leader
      continue;
    }
    waiting = true;
    if (source.asking_epochs) continue;
    if (request.topics.empty() || request.topics.back().name != key.first)
      request.topics.emplace_back().name = key.first;
    OffsetForLeaderEpochRequest::Partition& rp =
        request.topics.back().partitions.emplace_back();
    rp.index = key.second;
    rp.current_leader_epoch = f.leader_epoch;
    rp.leader_epoch = latest ? latest->epoch : kUndefinedEpoch;
    asked[key] = {f.leader_epoch, rp.leader_epoch};
  }
  if (asked.empty()) return waiting;
  source.asking_epochs = true;
  std::weak_ptr<bool> alive = alive_;
  source.client
      ->Send<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse>(
          3, request,
          [this, alive, leader, asked = std::move(asked)](
              absl::StatusOr<OffsetForLeaderEpochResponse> response,
              SharedBuffer) mutable {
            if (alive.expired()) return;
            OnEpochEnds(leader, std::move(asked), std::move(response));
          });
  return true;
}

void ReplicaFetchers::OnEpochEnds(
    int32_t leader, std::map<PartitionKey, std::pair<int32_t, int32_t>> asked,
    absl::StatusOr<OffsetForLeaderEpochResponse> response) {
  auto it = sources_.find(leader);
  if (it == sources_.end()) return;
  it->second.asking_epochs = false;
  bool failed = !response.ok();
  if (response.ok()) {
    for (const OffsetForLeaderEpochResponse::Topic& t : response->topics) {
      for (const OffsetForLeaderEpochResponse::Partition& rp : t.partitions) {
        const PartitionKey key{t.name, rp.index};
        auto question = asked.find(key);
        auto following = following_.find(key);
        // Asked about another leadership than the one followed now: ask again.
        if (question == asked.end() || following == following_.end() ||
            following->second.leader != leader ||
            following->second.leader_epoch != question->second.first)
          continue;
        Partition* p = b_.FindPartition(t.name, rp.index);
        if (p == nullptr) continue;
        if (rp.error_code != 0) {
          LogDebug("epoch end of ", t.name, "-", rp.index, " from broker ",
                   leader, ": ",
                   std::string(protocol::ErrorCodeName(rp.error_code)));
          failed = true;
          continue;
        }
        const PartitionLog& log = p->log();
        const int64_t cut = TruncationOffset(
            p->replication().epochs, log.log_end_offset(), log.high_watermark(),
            question->second.second,
            {.epoch = rp.leader_epoch, .end_offset = rp.end_offset});
        if (cut < log.log_end_offset()) TruncateLog(b_, *p, cut);
        following->second.truncated = true;
      }
    }
  }
  if (failed) {
    WaitThenFetch(leader, it->second, kReplicaFetchBackoffMs);
    return;
  }
  FetchFrom(leader);
}

}  // namespace exactly::broker
