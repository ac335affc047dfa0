// JoinGroup (key 11), v0-9. Flexible from v6. v4+ answers a join without a
// member id with MEMBER_ID_REQUIRED and the id to rejoin with (KIP-394).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_JOIN_GROUP_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_JOIN_GROUP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct JoinGroupRequest {
  static constexpr ApiKey kApiKey = ApiKey::kJoinGroup;
  struct Protocol {
    std::string name;
    std::string metadata;
    TaggedFields tagged_fields;
    bool operator==(const Protocol&) const = default;
  };
  std::string group_id;
  int32_t session_timeout_ms = 0;
  // v1+; v0 members use the session timeout instead.
  int32_t rebalance_timeout_ms = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v5+
  std::string protocol_type;
  std::vector<Protocol> protocols;
  std::optional<std::string> reason;  // v8+
  TaggedFields tagged_fields;

  bool operator==(const JoinGroupRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.String(group_id);
    io.Int32(session_timeout_ms);
    if (v >= 1) io.Int32(rebalance_timeout_ms);
    io.String(member_id);
    if (v >= 5) io.NullableString(group_instance_id);
    io.String(protocol_type);
    io.Array(protocols, [&](Protocol& p) {
      io.String(p.name);
      io.Bytes(p.metadata);
      io.TaggedFields(p.tagged_fields);
    });
    if (v >= 8) io.NullableString(reason);
    io.TaggedFields(tagged_fields);
  }
};

struct JoinGroupResponse {
  static constexpr ApiKey kApiKey = ApiKey::kJoinGroup;
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // v5+
    std::string metadata;
    TaggedFields tagged_fields;
    bool operator==(const Member&) const = default;
  };
  int32_t throttle_time_ms = 0;  // v2+
  int16_t error_code = 0;
  int32_t generation_id = -1;
  std::optional<std::string> protocol_type;  // v7+
  // Null only from v7; before that a null is sent as "" (as Kafka does).
  std::optional<std::string> protocol_name;
  std::string leader;
  bool skip_assignment = false;  // v9+
  std::string member_id;
  std::vector<Member> members;  // filled for the leader only
  TaggedFields tagged_fields;

  bool operator==(const JoinGroupResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 2) io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.Int32(generation_id);
    if (v >= 7) io.NullableString(protocol_type);
    StringNullableIf(io, protocol_name, v >= 7);
    io.String(leader);
    if (v >= 9) io.Bool(skip_assignment);
    io.String(member_id);
    io.Array(members, [&](Member& m) {
      io.String(m.member_id);
      if (v >= 5) io.NullableString(m.group_instance_id);
      io.Bytes(m.metadata);
      io.TaggedFields(m.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_JOIN_GROUP_H_
