// WriteTxnMarkers: a COMMIT or ABORT marker per producer on the partitions
// named. This broker's own coordinator writes its markers directly; the
// request comes from an admin client ending a hanging transaction (KIP-664's
// abortTransaction, with the epochs DescribeProducers reported). Answered
// once the markers are committed, as Kafka answers once they are replicated.
#include "cluster/appender.h"
#include "handlers/transaction_handlers.h"

namespace exactly::broker {

namespace {

// A marker Kafka cannot build a control batch for: no producer id, or epoch
// -1. Kafka (3.9) then fails the whole request, every partition of every
// marker UNKNOWN_SERVER_ERROR; the markers before it in the request are
// written, it and those after are not (checked against Kafka 3.9.1 by
// tests/integration/sdk/hanging_transaction_wire_test.cc).
bool Unbuildable(BrokerState& b,
                 const protocol::WriteTxnMarkersRequest::Marker& m) {
  if (m.producer_id != -1 && m.producer_epoch != -1) return false;
  // Kafka builds batches only for partitions it leads.
  for (const auto& t : m.topics) {
    for (int32_t index : t.partition_indexes) {
      if (b.FindPartition(t.name, index) != nullptr) return true;
    }
  }
  return false;
}

protocol::WriteTxnMarkersResponse FailedWhole(
    const protocol::WriteTxnMarkersRequest& request) {
  protocol::WriteTxnMarkersResponse response;
  for (const auto& m : request.markers) {
    auto& rm = response.markers.emplace_back();
    rm.producer_id = m.producer_id;
    for (const auto& t : m.topics) {
      auto& rt = rm.topics.emplace_back();
      rt.name = t.name;
      for (int32_t index : t.partition_indexes) {
        rt.partitions.push_back(
            {index,
             static_cast<int16_t>(protocol::ErrorCode::kUnknownServerError),
             {}});
      }
    }
  }
  return response;
}

}  // namespace

void HandleWriteTxnMarkers(BrokerState& b, const protocol::RequestHeader& h,
                           protocol::WriteTxnMarkersRequest& request,
                           Responder r) {
  using protocol::ErrorCode;
  protocol::WriteTxnMarkersResponse response;
  for (const auto& m : request.markers) {
    if (Unbuildable(b, m)) {
      response = FailedWhole(request);
      break;
    }
    auto& rm = response.markers.emplace_back();
    rm.producer_id = m.producer_id;
    const protocol::ControlType type = m.transaction_result
                                           ? protocol::ControlType::kCommit
                                           : protocol::ControlType::kAbort;
    for (const auto& t : m.topics) {
      auto& rt = rm.topics.emplace_back();
      rt.name = t.name;
      for (int32_t index : t.partition_indexes) {
        auto& rp = rt.partitions.emplace_back();
        rp.index = index;
        if (auto injected = b.faults().TakeError(h.api_key, &t.name, index)) {
          rp.error_code = *injected;
          continue;
        }
        Partition* p = b.FindPartition(t.name, index);
        if (p == nullptr) {
          rp.error_code =
              static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
          continue;
        }
        // Older than the epoch -1 of a producer the partition has not seen,
        // so older than any: refused whether it knows the producer or not.
        if (m.producer_epoch < -1) {
          rp.error_code =
              static_cast<int16_t>(ErrorCode::kInvalidProducerEpoch);
          continue;
        }
        rp.error_code = WriteTxnMarker(b, *p, m.producer_id, m.producer_epoch,
                                       type, m.coordinator_epoch)
                            .error.code_value();
      }
    }
  }
  b.commits().AfterCommit([response = std::move(response), r = std::move(r)](
                              const absl::Status& status) mutable {
    if (!status.ok()) {
      for (auto& m : response.markers)
        for (auto& t : m.topics)
          for (auto& p : t.partitions)
            if (p.error_code == 0)
              p.error_code =
                  static_cast<int16_t>(ErrorCode::kKafkaStorageError);
    }
    r.Send(response);
  });
}

}  // namespace exactly::broker
