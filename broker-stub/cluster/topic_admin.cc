#include "cluster/topic_admin.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cluster/cluster_membership.h"
#include "cluster/retention.h"
#include "controller/controller.h"
#include "group/group_coordinator.h"
#include "storage/keys.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

// The most partitions one topic may have (as BrokerState::CreateTopic).
constexpr int32_t kMaxPartitions = 100000;

ApiError UnknownTopic(std::string_view name) {
  return Error(
      ErrorCode::kUnknownTopicOrPartition,
      absl::StrCat("The topic '", std::string(name), "' does not exist."));
}

}  // namespace

ApiError DeleteTopic(BrokerState& b, std::string_view name) {
  Topic* topic = b.topics().Find(name);
  if (topic == nullptr) return UnknownTopic(name);
  if (Controller* controller = b.controller()) {
    // Every broker drops its copy as it applies the controller's decision,
    // this one at once.
    controller->DeleteTopic(name);
    ApplyClusterMetadata(b, controller->metadata());
    return {};
  }
  DeleteLocalTopic(b, *topic);
  return {};
}

void DeleteLocalTopic(BrokerState& b, Topic& doomed) {
  Topic* topic = &doomed;
  const std::string owned = topic->name;
  const uint32_t id = topic->id;
  // The partitions outlive the registry entry a moment: the fetches parked on
  // them are woken once the topic is gone, find nothing by its name, and answer
  // UNKNOWN_TOPIC_OR_PARTITION instead of waiting out their max_wait_ms.
  std::vector<std::unique_ptr<Partition>> partitions =
      std::move(topic->partitions);
  b.topics().Remove(owned);
  for (const auto& partition : partitions) partition->WakeWaiters();
  if (Store* store = b.store()) {
    // Batches, producer states and log start offsets of every partition.
    for (char kind : {'B', 'P', 'S'}) {
      store->DeletePrefix(keys::TopicDataPrefix(kind, id));
    }
    store->Delete(keys::Topic(owned));
  }
  // Committed offsets of the topic go with it, as Kafka's group coordinator
  // drops the offsets of deleted partitions.
  b.groups().ForgetTopic(owned);
  LogInfo("deleted topic ", owned, " (", partitions.size(), " partition(s))");
}

ApiError AddPartitions(
    BrokerState& b, std::string_view name, int32_t total,
    const std::optional<std::vector<std::vector<int32_t>>>& assignments,
    bool validate_only) {
  Topic* topic = b.topics().Find(name);
  if (topic == nullptr) return UnknownTopic(name);
  const int32_t current = topic->partition_count();
  if (total < current) {
    return Error(
        ErrorCode::kInvalidPartitions,
        absl::StrCat("Topic currently has ", current,
                     " partitions, which is higher than the requested ", total,
                     "."));
  }
  if (total == current) {
    return Error(ErrorCode::kInvalidPartitions,
                 absl::StrCat("Topic already has ", current, " partitions."));
  }
  if (total > kMaxPartitions) {
    return Error(ErrorCode::kInvalidPartitions,
                 absl::StrCat("Number of partitions must be at most ",
                              kMaxPartitions, ", not ", total, "."));
  }
  if (Controller* controller = b.controller()) {
    // The controller checks the assignments against the cluster's brokers
    // and places the new partitions; every broker grows the topic as it
    // applies that, this one at once.
    if (ApiError e =
            controller->AddPartitions(name, total, assignments, validate_only);
        !e.ok())
      return e;
    if (!validate_only) ApplyClusterMetadata(b, controller->metadata());
    return {};
  }
  if (assignments) {
    const int32_t node = b.options().node_id;
    std::set<int32_t> unknown;
    for (const std::vector<int32_t>& replicas : *assignments) {
      for (int32_t id : replicas) {
        if (id != node) unknown.insert(id);
      }
    }
    if (!unknown.empty()) {
      return Error(ErrorCode::kInvalidReplicaAssignment,
                   absl::StrCat("Unknown broker(s) in replica assignment: ",
                                absl::StrJoin(unknown, ", "), "."));
    }
    if (static_cast<int32_t>(assignments->size()) != total - current) {
      return Error(ErrorCode::kInvalidReplicaAssignment,
                   absl::StrCat("Increasing the number of partitions by ",
                                total - current, " but ", assignments->size(),
                                " assignments provided."));
    }
    for (size_t i = 0; i < assignments->size(); ++i) {
      if ((*assignments)[i].size() != 1) {
        return Error(
            ErrorCode::kInvalidReplicaAssignment,
            absl::StrCat("Inconsistent replication factor between partitions, "
                         "partition 0 has 1 while partition ",
                         current + static_cast<int32_t>(i), " has ",
                         (*assignments)[i].size(), "."));
      }
    }
  }
  if (validate_only) return {};
  b.topics().Grow(*topic, total);
  b.PersistTopic(*topic);
  LogInfo("topic ", topic->name, " grew from ", current, " to ", total,
          " partition(s)");
  return {};
}

DeleteRecordsOutcome DeleteRecords(BrokerState& b, std::string_view topic_name,
                                   int32_t index, int64_t offset) {
  DeleteRecordsOutcome out;
  Topic* topic = b.topics().Find(topic_name);
  Partition* partition = topic == nullptr ? nullptr : topic->partition(index);
  if (partition == nullptr) {
    out.error = Error(ErrorCode::kUnknownTopicOrPartition,
                      absl::StrCat("no partition ", std::string(topic_name),
                                   "[", index, "]"));
    return out;
  }
  if (!topic->config.cleanup_delete()) {
    out.error =
        Error(ErrorCode::kPolicyViolation,
              absl::StrCat("Records of partition ", topic->name, "-", index,
                           " can not be deleted due to the configured policy"));
    return out;
  }
  const PartitionLog& log = partition->log();
  const int64_t hwm = log.high_watermark();
  const int64_t target = offset == -1 ? hwm : offset;
  if (target < 0 || target > hwm) {
    out.error = Error(
        ErrorCode::kOffsetOutOfRange,
        absl::StrCat("Cannot increment the log start offset to ", target,
                     " of partition ", topic->name, "-", index,
                     " since it is larger than the high watermark ", hwm));
    return out;
  }
  // Whole batches below the target go from memory and store; the new log
  // start is staged too (retention.cc).
  if (target > log.log_start_offset())
    DeleteRecordsBefore(b, *partition, target);
  out.low_watermark = log.log_start_offset();
  return out;
}

ApiError AlterTopicConfigs(BrokerState& b, std::string_view name,
                           const std::vector<ConfigChange>& changes,
                           bool replace_all, bool validate_only) {
  if (absl::Status s = ValidateTopicName(name); !s.ok()) {
    return Error(ErrorCode::kInvalidTopicException, std::string(s.message()));
  }
  Topic* topic = b.topics().Find(name);
  if (topic == nullptr) return UnknownTopic(name);

  std::vector<std::string> null_values;
  std::set<std::string> seen;
  std::set<std::string> duplicates;
  for (const ConfigChange& c : changes) {
    if (c.op != ConfigChange::Op::kDelete && !c.value) {
      null_values.push_back(c.name);
    }
    if (!seen.insert(c.name).second) duplicates.insert(c.name);
  }
  if (!null_values.empty()) {
    return Error(ErrorCode::kInvalidRequest,
                 absl::StrCat("Null value not supported for : ",
                              absl::StrJoin(null_values, ", ")));
  }
  if (!replace_all && !duplicates.empty()) {
    return Error(ErrorCode::kInvalidRequest,
                 absl::StrCat("Error due to duplicate config keys : ",
                              absl::StrJoin(duplicates, ", ")));
  }

  // The topic's overrides after the changes, as Kafka's
  // prepareIncrementalConfigs computes them.
  std::map<std::string, std::string> overrides;
  if (!replace_all) overrides = topic->config.explicit_values();
  for (const ConfigChange& c : changes) {
    switch (c.op) {
      case ConfigChange::Op::kSet:
        overrides[c.name] = *c.value;
        break;
      case ConfigChange::Op::kDelete:
        overrides.erase(c.name);
        break;
      case ConfigChange::Op::kAppend:
      case ConfigChange::Op::kSubtract: {
        const bool append = c.op == ConfigChange::Op::kAppend;
        const TopicConfigDefinition* d = FindTopicConfigDefinition(c.name);
        if (d == nullptr) {
          return Error(ErrorCode::kInvalidConfig,
                       absl::StrCat("Unknown topic config name: ", c.name));
        }
        if (d->type != ConfigType::kList) {
          return Error(
              ErrorCode::kInvalidConfig,
              absl::StrCat("Config value ", append ? "append" : "subtract",
                           " is not allowed for config key: ", c.name));
        }
        auto it = overrides.find(c.name);
        // Append starts from the default when there is no override; subtract
        // from the empty list (as Kafka does).
        overrides[c.name] =
            EditConfigList(it != overrides.end() ? std::string_view(it->second)
                           : append ? std::string_view(d->default_value)
                                    : std::string_view(),
                           *c.value, append);
        break;
      }
      default:
        return Error(
            ErrorCode::kInvalidRequest,
            absl::StrCat("Unknown config operation ", static_cast<int>(c.op),
                         " for config ", c.name));
    }
  }
  TopicConfig config;
  for (const auto& [key, value] : overrides) {
    if (absl::Status s = config.Set(key, value); !s.ok()) {
      return Error(ErrorCode::kInvalidConfig, std::string(s.message()));
    }
  }
  if (validate_only) return {};

  if (Controller* controller = b.controller()) {
    // The other brokers take the new overrides from the controller.
    const bool unclean =
        overrides.count("unclean.leader.election.enable") != 0
            ? overrides["unclean.leader.election.enable"] == "true"
            : controller->options().unclean_leader_election;
    controller->SetTopicConfigs(name, overrides);
    controller->SetUncleanLeaderElection(name, unclean);
  }
  config.SetInherited(topic->config.inherited());
  topic->config = std::move(config);
  b.PersistTopic(*topic);
  LogInfo("topic ", topic->name, " configs now: ",
          absl::StrJoin(topic->config.explicit_values(), ", ",
                        absl::PairFormatter("=")));
  // Retention configs take effect now, not at the next append.
  for (const auto& partition : topic->partitions) {
    EnforceRetention(b, *partition);
  }
  return {};
}

}  // namespace exactly::broker
