// The group coordinator's log in a cluster: __consumer_offsets, laid out as
// Kafka lays it out (50 partitions, compacted, replicated), created through
// the controller on the first FindCoordinator for a group
// (EnsureCoordinatorTopic). Its records go to the group's partition as acks=all
// appends (ConsumerOffsetsLog), and the coordinator moves with the
// partitions' leaderships (TakeUpGroupLeaderships).
#ifndef EXACTLY_BROKER_CLUSTER_CONSUMER_OFFSETS_LOG_H_
#define EXACTLY_BROKER_CLUSTER_CONSUMER_OFFSETS_LOG_H_

#include <cstdint>
#include <vector>

#include "cluster/broker_state.h"
#include "controller/cluster_metadata.h"
#include "group/group_coordinator.h"

namespace exactly::broker {

class ConsumerOffsetsLog : public GroupLog {
 public:
  explicit ConsumerOffsetsLog(BrokerState& b) : b_(b) {}
  void Append(int32_t index, std::vector<OffsetsLogRecord> records,
              int64_t producer_id, int16_t producer_epoch,
              absl::AnyInvocable<void(protocol::ErrorCode)> done) override;

 private:
  BrokerState& b_;
};

// Loads the groups of every __consumer_offsets partition `m` names this
// broker the leader of (at a new epoch), and unloads those it no longer
// leads.
void TakeUpGroupLeaderships(BrokerState& b, const ClusterMetadata& m);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_CONSUMER_OFFSETS_LOG_H_
