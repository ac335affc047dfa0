#include "cluster/consumer_offsets_log.h"

#include <string>
#include <utility>

#include "cluster/coordinator_log.h"
#include "cluster/coordinator_placement.h"

namespace exactly::broker {

void ConsumerOffsetsLog::Append(
    int32_t index, std::vector<OffsetsLogRecord> records, int64_t producer_id,
    int16_t producer_epoch,
    absl::AnyInvocable<void(protocol::ErrorCode)> done) {
  AppendToCoordinatorLog(
      b_, kConsumerOffsetsTopic, index,
      BuildOffsetsLogBatch(records, b_.NowMs(), producer_id, producer_epoch),
      [done = std::move(done)](protocol::ErrorCode cause) mutable {
        done(CoordinatorWriteError(cause));
      });
}

void TakeUpGroupLeaderships(BrokerState& b, const ClusterMetadata& m) {
  GroupCoordinator& groups = b.groups();
  LeadershipChanges changes = ChangedLeaderships(b, m, kConsumerOffsetsTopic,
                                                 groups.loaded_partitions());
  for (int32_t index : changes.unload) groups.UnloadPartition(index);
  for (const auto& [index, epoch] : changes.load) {
    if (Partition* p = b.FindPartition(kConsumerOffsetsTopic, index))
      groups.LoadPartition(index, epoch, p->log());
  }
}

}  // namespace exactly::broker
