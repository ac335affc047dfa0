// CreateTopics (key 19), v0-7. Flexible from v5.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_TOPICS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_TOPICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct CreateTopicsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kCreateTopics;
  struct Assignment {
    int32_t partition_index = 0;
    std::vector<int32_t> broker_ids;
    TaggedFields tagged_fields;
  };
  struct Config {
    std::string name;
    std::optional<std::string> value;
    TaggedFields tagged_fields;
  };
  struct Topic {
    std::string name;
    int32_t num_partitions = -1;      // -1: the broker's default
    int16_t replication_factor = -1;  // -1: the broker's default
    std::vector<Assignment> assignments;
    std::vector<Config> configs;
    TaggedFields tagged_fields;
  };
  std::vector<Topic> topics;
  int32_t timeout_ms = 0;
  bool validate_only = false;  // v1+
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Int32(t.num_partitions);
      io.Int16(t.replication_factor);
      io.Array(t.assignments, [&](Assignment& a) {
        io.Int32(a.partition_index);
        io.Array(a.broker_ids, [&](int32_t& id) { io.Int32(id); });
        io.TaggedFields(a.tagged_fields);
      });
      io.Array(t.configs, [&](Config& c) {
        io.String(c.name);
        io.NullableString(c.value);
        io.TaggedFields(c.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.Int32(timeout_ms);
    if (io.version() >= 1) io.Bool(validate_only);
    io.TaggedFields(tagged_fields);
  }
};

struct CreateTopicsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kCreateTopics;
  struct Config {
    std::string name;
    std::optional<std::string> value;
    bool read_only = false;
    int8_t config_source = -1;
    bool is_sensitive = false;
    TaggedFields tagged_fields;
  };
  struct Topic {
    std::string name;
    Uuid topic_id{};  // v7+
    int16_t error_code = 0;
    std::optional<std::string> error_message;    // v1+
    int32_t num_partitions = -1;                 // v5+
    int16_t replication_factor = -1;             // v5+
    std::optional<std::vector<Config>> configs;  // v5+
    // v5+: tag 0 carries TopicConfigErrorCode; kept raw here.
    TaggedFields tagged_fields;
  };
  int32_t throttle_time_ms = 0;  // v2+
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 2) io.Int32(throttle_time_ms);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      if (v >= 7) io.Uuid(t.topic_id);
      io.Int16(t.error_code);
      if (v >= 1) io.NullableString(t.error_message);
      if (v >= 5) {
        io.Int32(t.num_partitions);
        io.Int16(t.replication_factor);
        io.NullableArray(t.configs, [&](Config& c) {
          io.String(c.name);
          io.NullableString(c.value);
          io.Bool(c.read_only);
          io.Int8(c.config_source);
          io.Bool(c.is_sensitive);
          io.TaggedFields(c.tagged_fields);
        });
      }
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_TOPICS_H_
