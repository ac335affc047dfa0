#include "cluster/topic_config.h"

#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace exactly::broker {

namespace {

// Time-based retention is off by default (Kafka: 7 days): a test broker must
// not delete records because their timestamps are old.
const std::vector<TopicConfigDefinition>* MakeDefinitions() {
  return new std::vector<TopicConfigDefinition>{
      {"cleanup.policy", "delete", true},
      {"compression.type", "producer", false},
      {"delete.retention.ms", "86400000", false},
      {"file.delete.delay.ms", "60000", false},
      {"flush.messages", "9223372036854775807", false},
      {"flush.ms", "9223372036854775807", false},
      {"follower.replication.throttled.replicas", "", false},
      {"index.interval.bytes", "4096", false},
      {"leader.replication.throttled.replicas", "", false},
      {"local.retention.bytes", "-2", false},
      {"local.retention.ms", "-2", false},
      {"max.compaction.lag.ms", "9223372036854775807", false},
      {"max.message.bytes", "1048588", true},
      {"message.downconversion.enable", "true", false},
      {"message.format.version", "3.0-IV1", false},
      {"message.timestamp.difference.max.ms", "9223372036854775807", false},
      {"message.timestamp.type", "CreateTime", true},
      {"min.cleanable.dirty.ratio", "0.5", false},
      {"min.compaction.lag.ms", "0", false},
      {"min.insync.replicas", "1", false},
      {"preallocate", "false", false},
      {"remote.storage.enable", "false", false},
      {"retention.bytes", "-1", true},
      {"retention.ms", "-1", true},
      {"segment.bytes", "1073741824", false},
      {"segment.index.bytes", "10485760", false},
      {"segment.jitter.ms", "0", false},
      {"segment.ms", "604800000", false},
      {"unclean.leader.election.enable", "false", false},
  };
}

const TopicConfigDefinition* FindDefinition(std::string_view name) {
  for (const TopicConfigDefinition& d : TopicConfigDefinitions()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

absl::Status BadValue(std::string_view name, std::string_view value,
                      std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value '", std::string(value), "' for config ",
                   std::string(name), ": ", std::string(why)));
}

absl::Status CheckLong(std::string_view name, std::string_view value,
                       int64_t min) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(std::string(value), &v))
    return BadValue(name, value, "not a number");
  if (v < min)
    return BadValue(name, value, absl::StrCat("must be at least ", min));
  return absl::OkStatus();
}

}  // namespace

const std::vector<TopicConfigDefinition>& TopicConfigDefinitions() {
  static const std::vector<TopicConfigDefinition>* definitions =
      MakeDefinitions();
  return *definitions;
}

absl::Status TopicConfig::Validate(std::string_view name,
                                   std::string_view value) {
  if (FindDefinition(name) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown topic config '", std::string(name), "'"));
  }
  if (name == "cleanup.policy") {
    for (absl::string_view part : absl::StrSplit(std::string(value), ',')) {
      if (part != "delete" && part != "compact") {
        return BadValue(name, value, "must be delete, compact or both");
      }
    }
    return absl::OkStatus();
  }
  if (name == "message.timestamp.type") {
    if (value != "CreateTime" && value != "LogAppendTime") {
      return BadValue(name, value, "must be CreateTime or LogAppendTime");
    }
    return absl::OkStatus();
  }
  if (name == "compression.type") {
    for (std::string_view ok :
         {"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"}) {
      if (value == ok) return absl::OkStatus();
    }
    return BadValue(name, value, "unknown compression type");
  }
  if (name == "retention.ms" || name == "retention.bytes")
    return CheckLong(name, value, -1);
  if (name == "local.retention.ms" || name == "local.retention.bytes") {
    return CheckLong(name, value, -2);
  }
  if (name == "max.message.bytes") {
    absl::Status s = CheckLong(name, value, 0);
    if (!s.ok()) return s;
    int64_t v = 0;
    (void)absl::SimpleAtoi(std::string(value), &v);
    if (v > std::numeric_limits<int32_t>::max())
      return BadValue(name, value, "too large");
    return absl::OkStatus();
  }
  if (name == "min.insync.replicas") return CheckLong(name, value, 1);
  if (name == "preallocate" || name == "message.downconversion.enable" ||
      name == "unclean.leader.election.enable" ||
      name == "remote.storage.enable") {
    if (value != "true" && value != "false")
      return BadValue(name, value, "must be true or false");
    return absl::OkStatus();
  }
  if (name == "min.cleanable.dirty.ratio") {
    double d = 0;
    if (!absl::SimpleAtod(std::string(value), &d) || d < 0 || d > 1) {
      return BadValue(name, value, "must be a number in [0, 1]");
    }
    return absl::OkStatus();
  }
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".ms") || ends_with(".bytes") || name == "flush.messages") {
    return CheckLong(name, value, 0);
  }
  return absl::OkStatus();
}

absl::Status TopicConfig::Set(std::string_view name,
                              std::optional<std::string_view> value) {
  if (!value) {
    if (FindDefinition(name) == nullptr) return Validate(name, "");
    explicit_.erase(std::string(name));
  } else {
    absl::Status s = Validate(name, *value);
    if (!s.ok()) return s;
    explicit_[std::string(name)] = std::string(*value);
  }
  Reparse();
  return absl::OkStatus();
}

std::string TopicConfig::Get(std::string_view name) const {
  auto it = explicit_.find(std::string(name));
  if (it != explicit_.end()) return it->second;
  const TopicConfigDefinition* d = FindDefinition(name);
  return d == nullptr ? std::string() : std::string(d->default_value);
}

void TopicConfig::Reparse() {
  (void)absl::SimpleAtoi(Get("retention.bytes"), &retention_bytes_);
  (void)absl::SimpleAtoi(Get("retention.ms"), &retention_ms_);
  (void)absl::SimpleAtoi(Get("max.message.bytes"), &max_message_bytes_);
  log_append_time_ = Get("message.timestamp.type") == "LogAppendTime";
}

}  // namespace exactly::broker
