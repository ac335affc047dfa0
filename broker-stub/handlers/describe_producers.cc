// DescribeProducers (KIP-664): each partition's producers, and where each
// one's open transaction starts. A transaction that stays open while its
// coordinator knows nothing of it is a hanging one; WriteTxnMarkers ends it.
#include "cluster/active_producers.h"
#include "handlers/transaction_handlers.h"

namespace exactly::broker {

void HandleDescribeProducers(BrokerState& b, const protocol::RequestHeader& h,
                             protocol::DescribeProducersRequest& request,
                             Responder r) {
  protocol::DescribeProducersResponse response;
  for (const auto& t : request.topics) {
    auto& rt = response.topics.emplace_back();
    rt.name = t.name;
    for (int32_t index : t.partition_indexes) {
      auto& rp = rt.partitions.emplace_back();
      rp.index = index;
      if (auto injected = b.faults().TakeError(h.api_key, &t.name, index)) {
        rp.error_code = *injected;
        continue;
      }
      // Kafka's check: READ on the topic.
      if (!Allowed(b, r, AclOperation::kRead, AclResourceType::kTopic,
                   t.name)) {
        rp.error_code = static_cast<int16_t>(
            protocol::ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      const Partition* p = b.FindPartition(t.name, index);
      if (p == nullptr) {
        rp.error_code =
            static_cast<int16_t>(protocol::ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      for (const ActiveProducer& a : ActiveProducers(*p)) {
        rp.active_producers.push_back({a.producer_id,
                                       a.producer_epoch,
                                       a.last_sequence,
                                       a.last_timestamp,
                                       a.coordinator_epoch,
                                       a.current_txn_start_offset,
                                       {}});
      }
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
