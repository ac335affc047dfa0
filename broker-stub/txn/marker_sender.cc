#include "txn/marker_sender.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "cluster/coordinator_placement.h"
#include "controller/controller.h"
#include "protocol/messages/write_txn_markers.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::WriteTxnMarkersRequest;
using protocol::WriteTxnMarkersResponse;

// The version sent: the newest both sides have.
constexpr int16_t kWriteTxnMarkersVersion = 1;

// Errors after which the marker is not sent again: the partition holds a
// newer epoch of the producer or a newer coordinator's marker, so this one
// would change nothing (Kafka's coordinator stops there too).
bool IsFinal(ErrorCode e) {
  return e == ErrorCode::kInvalidProducerEpoch ||
         e == ErrorCode::kTransactionCoordinatorFenced;
}

}  // namespace

MarkerSender::MarkerSender(BrokerState& b, PeerPool& peers)
    : b_(b), peers_(peers), retry_timer_(b.io()) {}

MarkerSender::~MarkerSender() { retry_timer_.cancel(); }

void MarkerSender::Send(TxnMarkers markers, absl::AnyInvocable<void()> done) {
  auto p = std::make_shared<Pending>();
  p->markers = std::move(markers);
  p->done = std::move(done);
  Attempt(p);
}

void MarkerSender::Attempt(const std::shared_ptr<Pending>& p) {
  if (p->markers.still_wanted && !p->markers.still_wanted()) {
    LogInfo("transaction '", p->markers.transactional_id,
            "': this broker no longer coordinates it; its markers are left "
            "to the new coordinator");
    return;
  }
  ++p->attempts;
  const std::shared_ptr<const ClusterMetadata> m = b_.controller()->metadata();
  // Which broker gets the marker of each partition, as known now.
  std::map<int32_t, std::vector<std::pair<std::string, int32_t>>> by_broker;
  for (auto it = p->markers.partitions.begin();
       it != p->markers.partitions.end();) {
    const auto& [topic, index] = *it;
    const BrokerInfo* target = nullptr;
    // A group's offsets partition too: its leader coordinates the group.
    if (const PartitionState* ps = m->partition(topic, index)) {
      target = m->broker(ps->leader);
    } else {
      LogInfo("transaction '", p->markers.transactional_id, "': ", topic, "-",
              index, " no longer exists; its marker is dropped");
      it = p->markers.partitions.erase(it);
      continue;
    }
    if (target != nullptr && !target->fenced)
      by_broker[target->node_id].emplace_back(topic, index);
    ++it;
  }
  for (const auto& [broker_id, partitions] : by_broker) {
    // A copy: clang before 16 cannot capture a structured binding.
    const int32_t node = broker_id;
    WriteTxnMarkersRequest request;
    WriteTxnMarkersRequest::Marker& marker = request.markers.emplace_back();
    marker.producer_id = p->markers.producer_id;
    marker.producer_epoch = p->markers.producer_epoch;
    marker.transaction_result = p->markers.commit;
    marker.coordinator_epoch = p->markers.coordinator_epoch;
    for (const auto& [topic, index] : partitions) {
      if (marker.topics.empty() || marker.topics.back().name != topic)
        marker.topics.emplace_back().name = topic;
      marker.topics.back().partition_indexes.push_back(index);
    }
    ++p->in_flight;
    peers_.Get(*m->broker(node))
        .Send<WriteTxnMarkersRequest, WriteTxnMarkersResponse>(
            kWriteTxnMarkersVersion, request,
            [this, p, node](absl::StatusOr<WriteTxnMarkersResponse> response,
                            SharedBuffer) {
              --p->in_flight;
              if (!response.ok()) {
                LogDebug("markers of '", p->markers.transactional_id,
                         "' to broker ", node, ": ",
                         response.status().message());
                return Settle(p);
              }
              for (const auto& rm : response->markers) {
                for (const auto& rt : rm.topics) {
                  for (const auto& rp : rt.partitions) {
                    const auto e = static_cast<ErrorCode>(rp.error_code);
                    if (e == ErrorCode::kNone || IsFinal(e)) {
                      if (e != ErrorCode::kNone)
                        LogWarning("transaction '", p->markers.transactional_id,
                                   "': marker on ", rt.name, "-", rp.index,
                                   " refused: ",
                                   std::string(protocol::ErrorCodeName(e)));
                      p->markers.partitions.erase({rt.name, rp.index});
                    } else {
                      LogDebug("transaction '", p->markers.transactional_id,
                               "': marker on ", rt.name, "-", rp.index, ": ",
                               std::string(protocol::ErrorCodeName(e)),
                               "; retrying");
                    }
                  }
                }
              }
              Settle(p);
            });
  }
  if (p->in_flight == 0) Settle(p);
}

void MarkerSender::Settle(const std::shared_ptr<Pending>& p) {
  if (p->in_flight > 0) return;
  if (p->markers.partitions.empty()) {
    if (p->done) std::exchange(p->done, nullptr)();
    return;
  }
  RetryLater(p);
}

void MarkerSender::RetryLater(std::shared_ptr<Pending> p) {
  if (p->attempts % 100 == 0) {
    LogWarning("transaction '", p->markers.transactional_id,
               "': ", p->markers.partitions.size(),
               " marker(s) still unacknowledged after ", p->attempts,
               " attempts");
  }
  waiting_.push_back(std::move(p));
  if (retry_armed_) return;
  retry_armed_ = true;
  retry_timer_.expires_after(std::chrono::milliseconds(kRetryBackoffMs));
  retry_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    retry_armed_ = false;
    std::vector<std::shared_ptr<Pending>> ready;
    ready.swap(waiting_);
    for (const auto& p : ready) Attempt(p);
  });
}

}  // namespace exactly::broker
