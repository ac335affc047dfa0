// IncrementalAlterConfigs (key 44), v0-1. Flexible from v1 (KIP-339).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_INCREMENTAL_ALTER_CONFIGS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_INCREMENTAL_ALTER_CONFIGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

// IncrementalAlterConfigs operations.
inline constexpr int8_t kConfigOpSet = 0;
inline constexpr int8_t kConfigOpDelete = 1;
inline constexpr int8_t kConfigOpAppend = 2;
inline constexpr int8_t kConfigOpSubtract = 3;

struct IncrementalAlterConfigsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kIncrementalAlterConfigs;
  struct Config {
    std::string name;
    int8_t config_operation = kConfigOpSet;
    std::optional<std::string> value;
    TaggedFields tagged_fields;
    bool operator==(const Config&) const = default;
  };
  struct Resource {
    int8_t resource_type = 0;  // 2 topic, 4 broker, 8 broker logger
    std::string resource_name;
    std::vector<Config> configs;
    TaggedFields tagged_fields;
    bool operator==(const Resource&) const = default;
  };
  std::vector<Resource> resources;
  bool validate_only = false;
  TaggedFields tagged_fields;

  bool operator==(const IncrementalAlterConfigsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(resources, [&](Resource& r) {
      io.Int8(r.resource_type);
      io.String(r.resource_name);
      io.Array(r.configs, [&](Config& c) {
        io.String(c.name);
        io.Int8(c.config_operation);
        io.NullableString(c.value);
        io.TaggedFields(c.tagged_fields);
      });
      io.TaggedFields(r.tagged_fields);
    });
    io.Bool(validate_only);
    io.TaggedFields(tagged_fields);
  }
};

struct IncrementalAlterConfigsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kIncrementalAlterConfigs;
  struct Result {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    int8_t resource_type = 0;
    std::string resource_name;
    TaggedFields tagged_fields;
    bool operator==(const Result&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<Result> results;  // Kafka's "Responses"
  TaggedFields tagged_fields;

  bool operator==(const IncrementalAlterConfigsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(results, [&](Result& r) {
      io.Int16(r.error_code);
      io.NullableString(r.error_message);
      io.Int8(r.resource_type);
      io.String(r.resource_name);
      io.TaggedFields(r.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_INCREMENTAL_ALTER_CONFIGS_H_
