// DescribeConfigs (key 32), v0-4. Flexible from v4. v1 replaces IsDefault with
// ConfigSource and adds synonyms; v3 adds types and documentation.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_CONFIGS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_CONFIGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DescribeConfigsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeConfigs;
  struct Resource {
    int8_t resource_type = 0;  // 2 topic, 4 broker, 8 broker logger
    std::string resource_name;
    // Null asks for every config of the resource.
    std::optional<std::vector<std::string>> configuration_keys;
    TaggedFields tagged_fields;
    bool operator==(const Resource&) const = default;
  };
  std::vector<Resource> resources;
  bool include_synonyms = false;       // v1+
  bool include_documentation = false;  // v3+
  TaggedFields tagged_fields;

  bool operator==(const DescribeConfigsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.Array(resources, [&](Resource& r) {
      io.Int8(r.resource_type);
      io.String(r.resource_name);
      io.NullableArray(r.configuration_keys,
                       [&](std::string& k) { io.String(k); });
      io.TaggedFields(r.tagged_fields);
    });
    if (v >= 1) io.Bool(include_synonyms);
    if (v >= 3) io.Bool(include_documentation);
    io.TaggedFields(tagged_fields);
  }
};

struct DescribeConfigsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeConfigs;
  struct Synonym {
    std::string name;
    std::optional<std::string> value;
    int8_t source = 0;
    TaggedFields tagged_fields;
    bool operator==(const Synonym&) const = default;
  };
  struct Config {
    std::string name;
    std::optional<std::string> value;  // null for sensitive configs
    bool read_only = false;
    bool is_default = false;    // v0 only
    int8_t config_source = -1;  // v1+: 1 topic, 4 static broker, 5 default...
    bool is_sensitive = false;
    std::vector<Synonym> synonyms;  // v1+
    int8_t config_type = 0;         // v3+: 0 unknown, 1 boolean, 2 string...
    std::optional<std::string> documentation;  // v3+
    TaggedFields tagged_fields;
    bool operator==(const Config&) const = default;
  };
  struct Result {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    int8_t resource_type = 0;
    std::string resource_name;
    std::vector<Config> configs;
    TaggedFields tagged_fields;
    bool operator==(const Result&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<Result> results;
  TaggedFields tagged_fields;

  bool operator==(const DescribeConfigsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.Int32(throttle_time_ms);
    io.Array(results, [&](Result& r) {
      io.Int16(r.error_code);
      io.NullableString(r.error_message);
      io.Int8(r.resource_type);
      io.String(r.resource_name);
      io.Array(r.configs, [&](Config& c) {
        io.String(c.name);
        io.NullableString(c.value);
        io.Bool(c.read_only);
        if (v == 0) io.Bool(c.is_default);
        if (v >= 1) io.Int8(c.config_source);
        io.Bool(c.is_sensitive);
        if (v >= 1) {
          io.Array(c.synonyms, [&](Synonym& s) {
            io.String(s.name);
            io.NullableString(s.value);
            io.Int8(s.source);
            io.TaggedFields(s.tagged_fields);
          });
        }
        if (v >= 3) {
          io.Int8(c.config_type);
          io.NullableString(c.documentation);
        }
        io.TaggedFields(c.tagged_fields);
      });
      io.TaggedFields(r.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_CONFIGS_H_
