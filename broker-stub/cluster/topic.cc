#include "cluster/topic.h"

#include "absl/strings/str_cat.h"
#include "protocol/serde.h"

namespace exactly::broker {

absl::Status ValidateTopicName(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("topic name is empty");
  if (name == "." || name == "..") {
    return absl::InvalidArgumentError("topic name cannot be '.' or '..'");
  }
  if (name.size() > 249) {
    return absl::InvalidArgumentError(absl::StrCat(
        "topic name is ", name.size(), " characters long; the limit is 249"));
  }
  for (char c : name) {
    bool legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!legal) {
      return absl::InvalidArgumentError(
          absl::StrCat("topic name '", std::string(name),
                       "' has a character outside [a-zA-Z0-9._-]"));
    }
  }
  return absl::OkStatus();
}

Topic* TopicRegistry::Find(std::string_view name) {
  auto it = topics_.find(name);
  return it == topics_.end() ? nullptr : it->second.get();
}

Topic& TopicRegistry::Add(std::string name, uint32_t id, int32_t partitions,
                          TopicConfig config) {
  auto topic = std::make_unique<Topic>();
  topic->name = name;
  topic->id = id;
  topic->config = std::move(config);
  topic->config.SetInherited(inherited_);
  Grow(*topic, partitions);
  Topic& ref = *topic;
  topics_[std::move(name)] = std::move(topic);
  return ref;
}

void TopicRegistry::SetInherited(TopicConfig::Inherited inherited) {
  inherited_ = std::move(inherited);
  for (auto& entry : topics_) entry.second->config.SetInherited(inherited_);
}

void TopicRegistry::Grow(Topic& topic, int32_t total) {
  for (int32_t i = topic.partition_count(); i < total; ++i) {
    topic.partitions.push_back(
        std::make_unique<Partition>(topic.name, topic.id, i));
  }
}

void TopicRegistry::Remove(std::string_view name) {
  auto it = topics_.find(name);
  if (it != topics_.end()) topics_.erase(it);
}

std::string SerializeTopic(const Topic& topic) {
  std::string out;
  protocol::Encoder e(&out, 0, false);
  e.Int8(0);  // format version
  e.UInt32(topic.id);
  e.Int32(topic.partition_count());
  const std::map<std::string, std::string>& configs =
      topic.config.explicit_values();
  e.Int32(static_cast<int32_t>(configs.size()));
  for (const auto& [name, value] : configs) {
    e.String(name);
    e.String(value);
  }
  return out;
}

absl::StatusOr<TopicRecord> DeserializeTopic(std::string_view bytes) {
  protocol::Decoder d(bytes, 0, false);
  TopicRecord r;
  int8_t format = 0;
  int32_t count = 0;
  d.Int8(format);
  d.UInt32(r.id);
  d.Int32(r.partitions);
  d.Int32(count);
  if (d.ok() && (format != 0 || count < 0))
    return absl::DataLossError("topic record format");
  for (int32_t i = 0; i < count && d.ok(); ++i) {
    std::string name, value;
    d.String(name);
    d.String(value);
    r.configs[name] = value;
  }
  if (!d.ok()) return absl::DataLossError(d.status().message());
  return r;
}

}  // namespace exactly::broker
