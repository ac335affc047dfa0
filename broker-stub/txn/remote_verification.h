// KIP-890 part 1 in a cluster: before a transactional batch opens a
// transaction on a partition, its leader checks with the transaction's
// coordinator that the partition is in the producer's ongoing transaction.
// When the coordinator is another broker the leader asks it over the wire,
// with AddPartitionsToTxn v4 VerifyOnly, as Kafka's AddPartitionsToTxnManager
// does. A coordinator that cannot be reached, or is not (or no longer) the
// coordinator, yields NOT_ENOUGH_REPLICAS for the partition, which producers
// retry (Kafka maps those errors the same way).
//
// Runs on the broker's event loop.
#ifndef EXACTLY_BROKER_TXN_REMOTE_VERIFICATION_H_
#define EXACTLY_BROKER_TXN_REMOTE_VERIFICATION_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "cluster/api_error.h"
#include "cluster/broker_state.h"

namespace exactly::broker {

// The coordinator's verdict per (topic, partition).
using VerifiedPartitions = std::map<std::pair<std::string, int32_t>, ApiError>;

void VerifyWithCoordinator(
    BrokerState& b, const std::string& transactional_id, int64_t producer_id,
    int16_t producer_epoch,
    const std::vector<std::pair<std::string, int32_t>>& partitions,
    absl::AnyInvocable<void(VerifiedPartitions)> done);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_TXN_REMOTE_VERIFICATION_H_
