// Fetch: read each partition from the fetch offset up to the high watermark
// (read_uncommitted) or the last stable offset (read_committed, with the
// aborted transactions that overlap what is returned). When less than min_bytes
// is available, the fetch parks on the partitions it reads until they grow or
// max_wait_ms passes (long poll).
#include <asio/steady_timer.hpp>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cluster/cluster_membership.h"
#include "handlers/authorize.h"
#include "handlers/handlers.h"
#include "replication/leader_side.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;

constexpr int8_t kReadCommitted = 1;

class DelayedFetch : public PartitionWaiter,
                     public std::enable_shared_from_this<DelayedFetch> {
 public:
  DelayedFetch(BrokerState& b, int16_t version, FetchRequest request,
               Responder r, std::vector<bool> denied)
      : b_(b),
        version_(version),
        request_(std::move(request)),
        responder_(std::move(r)),
        timer_(b.io()),
        denied_(std::move(denied)) {}

  void Start() {
    if (TryComplete(/*force=*/request_.max_wait_ms <= 0)) return;
    for (const FetchRequest::Topic& t : request_.topics) {
      for (const FetchRequest::Partition& p : t.partitions) {
        if (Partition* partition = b_.FindPartition(t.name, p.index)) {
          partition->AddWaiter(weak_from_this());
        }
      }
    }
    timer_.expires_after(std::chrono::milliseconds(request_.max_wait_ms));
    timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (!ec) self->TryComplete(true);
    });
  }

  bool OnPartitionChanged() override { return !TryComplete(false); }

 private:
  // Builds the response from what is readable now; sends it if it holds
  // min_bytes, if any partition has an error, or if `force`.
  bool TryComplete(bool force) {
    if (done_) return true;
    FetchResponse response;
    size_t total = 0;
    bool any_error = false;
    size_t max_bytes =
        request_.max_bytes > 0 ? static_cast<size_t>(request_.max_bytes) : 0;
    if (version_ < 3) max_bytes = SIZE_MAX;
    bool any_readable = denied_.empty();
    for (size_t i = 0; i < request_.topics.size(); ++i) {
      const FetchRequest::Topic& t = request_.topics[i];
      FetchResponse::Topic& rt = response.topics.emplace_back();
      rt.name = t.name;
      const bool denied = !denied_.empty() && denied_[i];
      any_readable |= !denied;
      for (const FetchRequest::Partition& p : t.partitions) {
        FetchResponse::Partition& rp = rt.partitions.emplace_back();
        rp.index = p.index;
        if (denied) {
          // Not an error that ends the wait: Kafka waits on the others.
          rp.error_code =
              static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);
          continue;
        }
        Read(t.name, p, max_bytes > total ? max_bytes - total : 0, total == 0,
             rp);
        total += rp.records.size();
        any_error |= rp.error_code != 0;
      }
    }
    if (!force && !any_error && any_readable &&
        total < static_cast<size_t>(std::max(0, request_.min_bytes))) {
      return false;
    }
    done_ = true;
    timer_.cancel();
    responder_.Send(response);
    return true;
  }

  void Read(const std::string& topic, const FetchRequest::Partition& p,
            size_t budget, bool first_batch_always,
            FetchResponse::Partition& rp) {
    bool read_committed =
        version_ >= 4 && request_.isolation_level == kReadCommitted;
    if (auto injected = b_.faults().TakeError(
            static_cast<int16_t>(protocol::ApiKey::kFetch), &topic, p.index)) {
      rp.error_code = *injected;
      return;
    }
    Partition* partition = b_.FindPartition(topic, p.index);
    if (partition == nullptr) {
      rp.error_code = static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
      return;
    }
    if (ErrorCode e =
            LeaderEpochError(b_, topic, *partition, p.current_leader_epoch);
        e != ErrorCode::kNone) {
      rp.error_code = static_cast<int16_t>(e);
      return;
    }
    const PartitionLog& log = partition->log();
    const bool out_of_range = p.fetch_offset < log.log_start_offset() ||
                              p.fetch_offset > log.log_end_offset();
    // A consumer is answered as by Kafka: the partition's offsets are -1
    // beside OFFSET_OUT_OF_RANGE (it resets through ListOffsets). A follower
    // of this broker's cluster restarts its log at the log start it is told.
    if (out_of_range && request_.replica_id < 0) {
      rp.error_code = static_cast<int16_t>(ErrorCode::kOffsetOutOfRange);
      return;
    }
    rp.high_watermark = log.high_watermark();
    rp.last_stable_offset = partition->last_stable_offset();
    rp.log_start_offset = log.log_start_offset();
    if (out_of_range) {
      rp.error_code = static_cast<int16_t>(ErrorCode::kOffsetOutOfRange);
      return;
    }
    if (read_committed) rp.aborted_transactions.emplace();
    // A follower copies everything the leader's store holds; a consumer sees
    // what every in-sync replica holds (or less, read_committed).
    int64_t limit = request_.replica_id >= 0 ? log.durable_end_offset()
                    : read_committed         ? rp.last_stable_offset
                                             : rp.high_watermark;
    size_t partition_budget =
        std::min(budget, static_cast<size_t>(std::max(0, p.max_bytes)));
    LogSlice slice =
        log.Read(p.fetch_offset, limit, partition_budget, first_batch_always);
    rp.records.slices = std::move(slice.batches);
    // The response is written later, maybe after the log dropped these batches.
    rp.records.owners = std::move(slice.owners);
    if (read_committed && slice.next_offset >= 0) {
      for (const AbortedTxn& a : partition->transactions().CollectAborted(
               p.fetch_offset, slice.next_offset)) {
        rp.aborted_transactions->push_back({a.producer_id, a.first_offset, {}});
      }
    }
  }

  BrokerState& b_;
  int16_t version_;
  FetchRequest request_;
  Responder responder_;
  asio::steady_timer timer_;
  // Per topic, whether the sender may not read it; empty when all may be.
  std::vector<bool> denied_;
  bool done_ = false;
};

// Kafka's checks: a follower needs CLUSTER_ACTION on the cluster, a
// consumer READ on each topic. Empty when everything may be read.
std::vector<bool> DeniedTopics(const BrokerState& b, const Responder& r,
                               const FetchRequest& request) {
  std::vector<bool> denied;
  if (b.authorizer() == nullptr) return denied;
  const bool follower_denied =
      request.replica_id >= 0 &&
      !AllowedOnCluster(b, r, AclOperation::kClusterAction);
  bool any = false;
  for (const FetchRequest::Topic& t : request.topics) {
    denied.push_back(
        follower_denied ||
        (request.replica_id < 0 &&
         !Allowed(b, r, AclOperation::kRead, AclResourceType::kTopic, t.name)));
    any |= denied.back();
  }
  if (!any) denied.clear();
  return denied;
}

}  // namespace

void HandleFetch(BrokerState& b, const RequestHeader& h,
                 protocol::FetchRequest& request, Responder r) {
  std::vector<bool> denied = DeniedTopics(b, r, request);
  // A follower's fetch offsets say what it holds (replication/).
  if (request.replica_id >= 0 && denied.empty()) NoteFollowerFetch(b, request);
  auto fetch = std::make_shared<DelayedFetch>(
      b, h.api_version, std::move(request), std::move(r), std::move(denied));
  fetch->Start();
}

}  // namespace exactly::broker
