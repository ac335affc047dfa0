// Heartbeat (key 12), v0-4. Flexible from v4.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_HEARTBEAT_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_HEARTBEAT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/serde.h"

namespace exactly::protocol {

struct HeartbeatRequest {
  static constexpr ApiKey kApiKey = ApiKey::kHeartbeat;
  std::string group_id;
  int32_t generation_id = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v3+
  TaggedFields tagged_fields;

  bool operator==(const HeartbeatRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.String(group_id);
    io.Int32(generation_id);
    io.String(member_id);
    if (io.version() >= 3) io.NullableString(group_instance_id);
    io.TaggedFields(tagged_fields);
  }
};

struct HeartbeatResponse {
  static constexpr ApiKey kApiKey = ApiKey::kHeartbeat;
  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  TaggedFields tagged_fields;

  bool operator==(const HeartbeatResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    if (io.version() >= 1) io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_HEARTBEAT_H_
