// Topic configs: the names Kafka defines, their defaults on this broker,
// validation, and the few the broker acts on (retention.bytes, retention.ms,
// max.message.bytes, message.timestamp.type, cleanup.policy). Unknown names are
// rejected (INVALID_CONFIG).
#ifndef EXACTLY_BROKER_CLUSTER_TOPIC_CONFIG_H_
#define EXACTLY_BROKER_CLUSTER_TOPIC_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace exactly::broker {

struct TopicConfigDefinition {
  std::string_view name;
  std::string_view default_value;
  bool honored;  // the broker acts on it; others are stored and described only
};

// Every topic config name Kafka 3.4 defines, with this broker's defaults.
const std::vector<TopicConfigDefinition>& TopicConfigDefinitions();

class TopicConfig {
 public:
  // Checks one name=value pair: INVALID_CONFIG-worthy errors come back as
  // InvalidArgument.
  static absl::Status Validate(std::string_view name, std::string_view value);

  // Sets (or, with nullopt, resets to default) one config; validates first.
  absl::Status Set(std::string_view name,
                   std::optional<std::string_view> value);

  // The effective value (explicit or default) and whether it was set
  // explicitly.
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

 private:
  void Reparse();

  std::map<std::string, std::string> explicit_;
  int64_t retention_bytes_ = -1;
  int64_t retention_ms_ = -1;
  int32_t max_message_bytes_ = 1048588;
  bool log_append_time_ = false;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_TOPIC_CONFIG_H_
