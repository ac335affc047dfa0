// Topic configs: the names Kafka defines, their types and defaults on this
// broker, the broker configs they default from, validation, and the few the
// broker acts on:
// - retention.bytes, retention.ms: retention deletes the oldest whole batches
//   below the last stable offset (cluster/retention.cc), with cleanup.policy
//   "delete" only;
// - max.message.bytes: a larger batch gets MESSAGE_TOO_LARGE;
// - message.timestamp.type: LogAppendTime stamps batches with the broker's
//   clock;
// - cleanup.policy: without "delete", no retention and no DeleteRecords
//   (POLICY_VIOLATION); with "compact", a record without a key gets
//   INVALID_RECORD, and the log cleaner compacts the partitions
//   (cluster/log_cleaner.h) under segment.bytes, segment.ms,
//   min.cleanable.dirty.ratio, min.compaction.lag.ms, max.compaction.lag.ms
//   and delete.retention.ms.
// The others are validated, stored and described. Unknown names are rejected
// (INVALID_CONFIG).
//
// A config the topic does not override takes the value of the broker's
// dynamic config it defaults from (cluster/dynamic_broker_config.h), when one
// is set, else its default: the broker hands every topic the same inherited
// values (SetInherited) and replaces them when a dynamic config changes.
#ifndef EXACTLY_BROKER_CLUSTER_TOPIC_CONFIG_H_
#define EXACTLY_BROKER_CLUSTER_TOPIC_CONFIG_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace exactly::broker {

// The value types of Kafka's ConfigDef, numbered as DescribeConfigs v3+
// reports them.
enum class ConfigType : int8_t {
  kUnknown = 0,
  kBoolean = 1,
  kString = 2,
  kInt = 3,
  kShort = 4,
  kLong = 5,
  kDouble = 6,
  kList = 7,
  kClass = 8,
  kPassword = 9,
};

struct TopicConfigDefinition {
  std::string_view name;
  std::string_view default_value;
  bool honored;  // the broker acts on it; others are stored and described only
  ConfigType type;
  // The broker config this topic config defaults from (Kafka's
  // TopicConfigSynonyms), empty if none.
  std::string_view broker_synonym;
};

// Every topic config name Kafka 3.9 defines, with this broker's defaults.
const std::vector<TopicConfigDefinition>& TopicConfigDefinitions();
// The definition of `name`, or null for a name Kafka does not define.
const TopicConfigDefinition* FindTopicConfigDefinition(std::string_view name);

// A LIST config's items, as Kafka parses them: trimmed, split at commas; an
// empty or blank value is the empty list.
std::vector<std::string> SplitConfigList(std::string_view value);

// IncrementalAlterConfigs' APPEND (`append`: each of `items` not yet in
// `current` goes at its end) or SUBTRACT (each is removed) on a LIST config's
// value; the result joined with commas.
std::string EditConfigList(std::string_view current, std::string_view items,
                           bool append);

// The configs the log cleaner acts on, parsed.
struct CompactionConfig {
  int64_t segment_bytes = 1073741824;
  int64_t segment_ms = 604800000;
  int64_t delete_retention_ms = 86400000;
  int64_t min_lag_ms = 0;
  int64_t max_lag_ms = INT64_MAX;
  double min_cleanable_ratio = 0.5;
};

class TopicConfig {
 public:
  // Checks one name=value pair: INVALID_CONFIG-worthy errors come back as
  // InvalidArgument.
  static absl::Status Validate(std::string_view name, std::string_view value);

  // Sets (or, with nullopt, resets to default) one config; validates first.
  absl::Status Set(std::string_view name,
                   std::optional<std::string_view> value);

  // The values inherited from the broker's dynamic configs, by topic config
  // name (null: none). Reparses.
  using Inherited = std::shared_ptr<const std::map<std::string, std::string>>;
  void SetInherited(Inherited inherited);
  const Inherited& inherited() const { return inherited_; }
  // The inherited value of `name`, if any.
  const std::string* FindInherited(std::string_view name) const;

  // The effective value (explicit, else inherited, else default) and whether
  // it was set explicitly.
  std::string Get(std::string_view name) const;
  bool IsExplicit(std::string_view name) const {
    return explicit_.count(std::string(name));
  }
  const std::map<std::string, std::string>& explicit_values() const {
    return explicit_;
  }

  // The honored values, parsed.
  int64_t retention_bytes() const { return retention_bytes_; }
  int64_t retention_ms() const { return retention_ms_; }
  int32_t max_message_bytes() const { return max_message_bytes_; }
  bool log_append_time() const { return log_append_time_; }
  // The topic's own min.insync.replicas (or the dynamic broker config's);
  // unset: the broker's static default applies
  // (BrokerState::MinInsyncReplicas).
  std::optional<int32_t> min_insync_replicas() const {
    return min_insync_replicas_;
  }
  // cleanup.policy contains "delete" / "compact".
  bool cleanup_delete() const { return cleanup_delete_; }
  bool cleanup_compact() const { return cleanup_compact_; }
  const CompactionConfig& compaction() const { return compaction_; }

 private:
  void Reparse();

  std::map<std::string, std::string> explicit_;
  Inherited inherited_;
  int64_t retention_bytes_ = -1;
  int64_t retention_ms_ = -1;
  int32_t max_message_bytes_ = 1048588;
  std::optional<int32_t> min_insync_replicas_;
  bool log_append_time_ = false;
  bool cleanup_delete_ = true;
  bool cleanup_compact_ = false;
  CompactionConfig compaction_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_TOPIC_CONFIG_H_
