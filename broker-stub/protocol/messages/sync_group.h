// SyncGroup (key 14), v0-5. Flexible from v4; v5 echoes the protocol type and
// name so the client can check them (KIP-559).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_SYNC_GROUP_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_SYNC_GROUP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct SyncGroupRequest {
  static constexpr ApiKey kApiKey = ApiKey::kSyncGroup;
  struct Assignment {
    std::string member_id;
    std::string assignment;
    TaggedFields tagged_fields;
    bool operator==(const Assignment&) const = default;
  };
  std::string group_id;
  int32_t generation_id = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v3+
  std::optional<std::string> protocol_type;      // v5+
  std::optional<std::string> protocol_name;      // v5+
  std::vector<Assignment> assignments;           // from the leader only
  TaggedFields tagged_fields;

  bool operator==(const SyncGroupRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.String(group_id);
    io.Int32(generation_id);
    io.String(member_id);
    if (v >= 3) io.NullableString(group_instance_id);
    if (v >= 5) {
      io.NullableString(protocol_type);
      io.NullableString(protocol_name);
    }
    io.Array(assignments, [&](Assignment& a) {
      io.String(a.member_id);
      io.Bytes(a.assignment);
      io.TaggedFields(a.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct SyncGroupResponse {
  static constexpr ApiKey kApiKey = ApiKey::kSyncGroup;
  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::optional<std::string> protocol_type;  // v5+
  std::optional<std::string> protocol_name;  // v5+
  std::string assignment;
  TaggedFields tagged_fields;

  bool operator==(const SyncGroupResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 1) io.Int32(throttle_time_ms);
    io.Int16(error_code);
    if (v >= 5) {
      io.NullableString(protocol_type);
      io.NullableString(protocol_name);
    }
    io.Bytes(assignment);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_SYNC_GROUP_H_
