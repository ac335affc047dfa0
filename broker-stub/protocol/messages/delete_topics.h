// DeleteTopics (key 20), v0-6. Flexible from v4. v6 names topics by name or
// id (KIP-516), so a result's name may be null from v6.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_TOPICS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_TOPICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DeleteTopicsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteTopics;
  struct Topic {
    std::optional<std::string> name;  // null when deleting by id
    Uuid topic_id{};                  // zero when deleting by name
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  std::vector<Topic> topics;             // v6+
  std::vector<std::string> topic_names;  // v0-5
  int32_t timeout_ms = 0;
  TaggedFields tagged_fields;

  bool operator==(const DeleteTopicsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    if (io.version() >= 6) {
      io.Array(topics, [&](Topic& t) {
        io.NullableString(t.name);
        io.Uuid(t.topic_id);
        io.TaggedFields(t.tagged_fields);
      });
    } else {
      io.Array(topic_names, [&](std::string& n) { io.String(n); });
    }
    io.Int32(timeout_ms);
    io.TaggedFields(tagged_fields);
  }
};

struct DeleteTopicsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteTopics;
  struct Topic {
    // Null only from v6; before that a null is sent as "".
    std::optional<std::string> name;
    Uuid topic_id{};  // v6+
    int16_t error_code = 0;
    std::optional<std::string> error_message;  // v5+
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  int32_t throttle_time_ms = 0;  // v1+
  std::vector<Topic> topics;     // Kafka's "Responses"
  TaggedFields tagged_fields;

  bool operator==(const DeleteTopicsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 1) io.Int32(throttle_time_ms);
    io.Array(topics, [&](Topic& t) {
      StringNullableIf(io, t.name, v >= 6);
      if (v >= 6) io.Uuid(t.topic_id);
      io.Int16(t.error_code);
      if (v >= 5) io.NullableString(t.error_message);
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_TOPICS_H_
