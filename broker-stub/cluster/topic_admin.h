// Admin operations on existing topics, as Kafka's controller performs them:
// deleting a topic, adding partitions, deleting records, altering configs. Free
// functions on BrokerState's public API. Each checks what Kafka checks and
// answers the error Kafka would; on success it changes the in-memory state at
// once and stages the durable form in the store (when there is one) for the
// next commit, so a handler answers once b.commits().AfterCommit() runs.
#ifndef EXACTLY_BROKER_CLUSTER_TOPIC_ADMIN_H_
#define EXACTLY_BROKER_CLUSTER_TOPIC_ADMIN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/api_error.h"
#include "cluster/broker_state.h"

namespace exactly::broker {

// Deletes topic `name`: its partitions with their records, producer states and
// transaction indexes, its definition, and the offsets groups committed for it.
// Long-poll fetches parked on its partitions are woken and answer
// UNKNOWN_TOPIC_OR_PARTITION. A topic of the same name can be created right
// after; it gets a new id, so nothing of the old one shows through.
ApiError DeleteTopic(BrokerState& b, std::string_view name);
// Drops this broker's copy of the topic: what DeleteTopic does on a single
// broker, and what every broker of a cluster does once the controller deleted
// it (cluster/cluster_membership.cc).
void DeleteLocalTopic(BrokerState& b, Topic& topic);

// Grows topic `name` to `total` partitions (CreatePartitions). `assignments`,
// when given, holds the replicas of each new partition; on this one-broker
// cluster each must be exactly {this broker}.
ApiError AddPartitions(
    BrokerState& b, std::string_view name, int32_t total,
    const std::optional<std::vector<std::vector<int32_t>>>& assignments,
    bool validate_only);

// Moves the log start offset of `topic`[`partition`] up to `offset` (-1: the
// high watermark), deleting the whole batches below it (DeleteRecords).
// Offsets above the high watermark get OFFSET_OUT_OF_RANGE; an offset at or
// below the current log start changes nothing.
struct DeleteRecordsOutcome {
  ApiError error;
  int64_t low_watermark = -1;  // the log start offset afterwards
};
DeleteRecordsOutcome DeleteRecords(BrokerState& b, std::string_view topic,
                                   int32_t partition, int64_t offset);

// One config change of an AlterConfigs or IncrementalAlterConfigs request.
struct ConfigChange {
  enum class Op : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };
  std::string name;
  Op op = Op::kSet;
  std::optional<std::string> value;
};

// Changes the configs of topic `name`. With `replace_all` (AlterConfigs) the
// changes (all kSet) become the topic's whole set of overrides, and every
// config not named returns to its default; otherwise (IncrementalAlterConfigs)
// each change applies to the current overrides. Nothing changes unless every
// change is valid. Honored configs take effect at once: retention runs right
// after the change.
ApiError AlterTopicConfigs(BrokerState& b, std::string_view name,
                           const std::vector<ConfigChange>& changes,
                           bool replace_all, bool validate_only);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_TOPIC_ADMIN_H_
