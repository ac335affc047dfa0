#include "cluster/topic_config.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace exactly::broker {

namespace {

// Time-based retention is off by default (Kafka: 7 days): a test broker must
// not delete records because their timestamps are old.
const std::vector<TopicConfigDefinition>* MakeDefinitions() {
  using T = ConfigType;
  return new std::vector<TopicConfigDefinition>{
      {"cleanup.policy", "delete", true, T::kList, "log.cleanup.policy"},
      {"compression.gzip.level", "-1", false, T::kInt,
       "compression.gzip.level"},
      {"compression.lz4.level", "9", false, T::kInt, "compression.lz4.level"},
      {"compression.type", "producer", false, T::kString, "compression.type"},
      {"compression.zstd.level", "3", false, T::kInt, "compression.zstd.level"},
      {"delete.retention.ms", "86400000", true, T::kLong,
       "log.cleaner.delete.retention.ms"},
      {"file.delete.delay.ms", "60000", false, T::kLong,
       "log.segment.delete.delay.ms"},
      {"flush.messages", "9223372036854775807", false, T::kLong,
       "log.flush.interval.messages"},
      {"flush.ms", "9223372036854775807", false, T::kLong,
       "log.flush.interval.ms"},
      {"follower.replication.throttled.replicas", "", false, T::kList, ""},
      {"index.interval.bytes", "4096", false, T::kInt,
       "log.index.interval.bytes"},
      {"leader.replication.throttled.replicas", "", false, T::kList, ""},
      {"local.retention.bytes", "-2", false, T::kLong,
       "log.local.retention.bytes"},
      {"local.retention.ms", "-2", false, T::kLong, "log.local.retention.ms"},
      {"max.compaction.lag.ms", "9223372036854775807", true, T::kLong,
       "log.cleaner.max.compaction.lag.ms"},
      {"max.message.bytes", "1048588", true, T::kInt, "message.max.bytes"},
      {"message.downconversion.enable", "true", false, T::kBoolean,
       "log.message.downconversion.enable"},
      {"message.format.version", "3.0-IV1", false, T::kString,
       "log.message.format.version"},
      {"message.timestamp.after.max.ms", "9223372036854775807", false, T::kLong,
       "log.message.timestamp.after.max.ms"},
      {"message.timestamp.before.max.ms", "9223372036854775807", false,
       T::kLong, "log.message.timestamp.before.max.ms"},
      {"message.timestamp.difference.max.ms", "9223372036854775807", false,
       T::kLong, "log.message.timestamp.difference.max.ms"},
      {"message.timestamp.type", "CreateTime", true, T::kString,
       "log.message.timestamp.type"},
      {"min.cleanable.dirty.ratio", "0.5", true, T::kDouble,
       "log.cleaner.min.cleanable.ratio"},
      {"min.compaction.lag.ms", "0", true, T::kLong,
       "log.cleaner.min.compaction.lag.ms"},
      {"min.insync.replicas", "1", false, T::kInt, "min.insync.replicas"},
      {"preallocate", "false", false, T::kBoolean, "log.preallocate"},
      {"remote.log.copy.disable", "false", false, T::kBoolean, ""},
      {"remote.log.delete.on.disable", "false", false, T::kBoolean, ""},
      {"remote.storage.enable", "false", false, T::kBoolean, ""},
      {"retention.bytes", "-1", true, T::kLong, "log.retention.bytes"},
      {"retention.ms", "-1", true, T::kLong, "log.retention.ms"},
      {"segment.bytes", "1073741824", true, T::kInt, "log.segment.bytes"},
      {"segment.index.bytes", "10485760", false, T::kInt,
       "log.index.size.max.bytes"},
      {"segment.jitter.ms", "0", false, T::kLong, "log.roll.jitter.ms"},
      {"segment.ms", "604800000", true, T::kLong, "log.roll.ms"},
      {"unclean.leader.election.enable", "false", false, T::kBoolean,
       "unclean.leader.election.enable"},
  };
}

absl::Status BadValue(std::string_view name, std::string_view value,
                      std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value '", std::string(value), "' for config ",
                   std::string(name), ": ", std::string(why)));
}

}  // namespace

const std::vector<TopicConfigDefinition>& TopicConfigDefinitions() {
  static const std::vector<TopicConfigDefinition>* definitions =
      MakeDefinitions();
  return *definitions;
}

const TopicConfigDefinition* FindTopicConfigDefinition(std::string_view name) {
  for (const TopicConfigDefinition& d : TopicConfigDefinitions()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string> SplitConfigList(std::string_view value) {
  std::vector<std::string> items;
  if (absl::StripAsciiWhitespace(std::string(value)).empty()) return items;
  for (absl::string_view item : absl::StrSplit(std::string(value), ',')) {
    items.emplace_back(absl::StripAsciiWhitespace(item));
  }
  return items;
}

std::string EditConfigList(std::string_view current, std::string_view items,
                           bool append) {
  std::vector<std::string> list = SplitConfigList(current);
  for (const std::string& item : SplitConfigList(items)) {
    auto found = std::find(list.begin(), list.end(), item);
    if (append && found == list.end()) list.push_back(item);
    if (!append && found != list.end()) list.erase(found);
  }
  return absl::StrJoin(list, ",");
}

absl::Status TopicConfig::Validate(std::string_view name,
                                   std::string_view value) {
  if (FindTopicConfigDefinition(name) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown topic config '", std::string(name), "'"));
  }
  if (name == "cleanup.policy") {
    for (const std::string& part : SplitConfigList(value)) {
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
  // The compression levels' ranges (Kafka 3.8+, KIP-390): gzip 1..9 or -1
  // (zlib's default), lz4 1..17, zstd -131072..22.
  for (auto [codec, low, high] :
       {std::tuple<std::string_view, int64_t, int64_t>{"compression.gzip.level",
                                                       1, 9},
        {"compression.lz4.level", 1, 17},
        {"compression.zstd.level", -131072, 22}}) {
    if (name != codec) continue;
    int64_t v = 0;
    if (!absl::SimpleAtoi(std::string(value), &v))
      return BadValue(name, value, "not a number");
    if ((v < low || v > high) &&
        !(codec == "compression.gzip.level" && v == -1))
      return BadValue(name, value,
                      absl::StrCat("must be between ", low, " and ", high));
    return absl::OkStatus();
  }
  const TopicConfigDefinition& d = *FindTopicConfigDefinition(name);
  switch (d.type) {
    case ConfigType::kBoolean: {
      std::string v =
          absl::AsciiStrToLower(absl::StripAsciiWhitespace(std::string(value)));
      if (v != "true" && v != "false")
        return BadValue(name, value, "must be true or false");
      return absl::OkStatus();
    }
    case ConfigType::kInt:
    case ConfigType::kLong: {
      int64_t v = 0;
      if (!absl::SimpleAtoi(std::string(value), &v))
        return BadValue(name, value, "not a number");
      if (d.type == ConfigType::kInt &&
          (v < std::numeric_limits<int32_t>::min() ||
           v > std::numeric_limits<int32_t>::max())) {
        return BadValue(name, value, "not a 32-bit integer");
      }
      // Kafka's lower bounds (LogConfig); retention.bytes has none.
      if (name == "retention.bytes") return absl::OkStatus();
      int64_t min = 0;
      if (name == "retention.ms") min = -1;
      if (name == "local.retention.ms" || name == "local.retention.bytes")
        min = -2;
      if (name == "min.insync.replicas" || name == "segment.ms" ||
          name == "flush.messages" || name == "max.compaction.lag.ms") {
        min = 1;
      }
      if (name == "segment.bytes") min = 14;
      if (name == "segment.index.bytes") min = 4;
      if (v < min)
        return BadValue(name, value, absl::StrCat("must be at least ", min));
      return absl::OkStatus();
    }
    case ConfigType::kDouble: {
      double v = 0;
      if (!absl::SimpleAtod(std::string(value), &v) || v < 0 || v > 1) {
        return BadValue(name, value, "must be a number in [0, 1]");
      }
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

absl::Status TopicConfig::Set(std::string_view name,
                              std::optional<std::string_view> value) {
  if (!value) {
    if (FindTopicConfigDefinition(name) == nullptr) return Validate(name, "");
    explicit_.erase(std::string(name));
  } else {
    absl::Status s = Validate(name, *value);
    if (!s.ok()) return s;
    explicit_[std::string(name)] = std::string(*value);
  }
  Reparse();
  return absl::OkStatus();
}

void TopicConfig::SetInherited(Inherited inherited) {
  inherited_ = std::move(inherited);
  Reparse();
}

const std::string* TopicConfig::FindInherited(std::string_view name) const {
  if (!inherited_) return nullptr;
  auto it = inherited_->find(std::string(name));
  return it == inherited_->end() ? nullptr : &it->second;
}

std::string TopicConfig::Get(std::string_view name) const {
  auto it = explicit_.find(std::string(name));
  if (it != explicit_.end()) return it->second;
  if (const std::string* inherited = FindInherited(name)) return *inherited;
  const TopicConfigDefinition* d = FindTopicConfigDefinition(name);
  return d == nullptr ? std::string() : std::string(d->default_value);
}

void TopicConfig::Reparse() {
  (void)absl::SimpleAtoi(Get("retention.bytes"), &retention_bytes_);
  (void)absl::SimpleAtoi(Get("retention.ms"), &retention_ms_);
  (void)absl::SimpleAtoi(Get("max.message.bytes"), &max_message_bytes_);
  min_insync_replicas_.reset();
  if (int32_t v = 0; (IsExplicit("min.insync.replicas") ||
                      FindInherited("min.insync.replicas") != nullptr) &&
                     absl::SimpleAtoi(Get("min.insync.replicas"), &v))
    min_insync_replicas_ = v;
  log_append_time_ = Get("message.timestamp.type") == "LogAppendTime";
  (void)absl::SimpleAtoi(Get("segment.bytes"), &compaction_.segment_bytes);
  (void)absl::SimpleAtoi(Get("segment.ms"), &compaction_.segment_ms);
  (void)absl::SimpleAtoi(Get("delete.retention.ms"),
                         &compaction_.delete_retention_ms);
  (void)absl::SimpleAtoi(Get("min.compaction.lag.ms"), &compaction_.min_lag_ms);
  (void)absl::SimpleAtoi(Get("max.compaction.lag.ms"), &compaction_.max_lag_ms);
  (void)absl::SimpleAtod(Get("min.cleanable.dirty.ratio"),
                         &compaction_.min_cleanable_ratio);
  cleanup_delete_ = cleanup_compact_ = false;
  for (const std::string& policy : SplitConfigList(Get("cleanup.policy"))) {
    cleanup_delete_ |= policy == "delete";
    cleanup_compact_ |= policy == "compact";
  }
}

}  // namespace exactly::broker
