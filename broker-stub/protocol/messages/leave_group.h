// LeaveGroup (key 13), v0-5. Flexible from v4. v3 replaces the single MemberId
// with a batch of members (KIP-345), each answered on its own.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_LEAVE_GROUP_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_LEAVE_GROUP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct LeaveGroupRequest {
  static constexpr ApiKey kApiKey = ApiKey::kLeaveGroup;
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::optional<std::string> reason;  // v5+
    TaggedFields tagged_fields;
    bool operator==(const Member&) const = default;
  };
  std::string group_id;
  std::string member_id;        // v0-2
  std::vector<Member> members;  // v3+
  TaggedFields tagged_fields;

  bool operator==(const LeaveGroupRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.String(group_id);
    if (v <= 2) {
      io.String(member_id);
    } else {
      io.Array(members, [&](Member& m) {
        io.String(m.member_id);
        io.NullableString(m.group_instance_id);
        if (v >= 5) io.NullableString(m.reason);
        io.TaggedFields(m.tagged_fields);
      });
    }
    io.TaggedFields(tagged_fields);
  }
};

struct LeaveGroupResponse {
  static constexpr ApiKey kApiKey = ApiKey::kLeaveGroup;
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    int16_t error_code = 0;
    TaggedFields tagged_fields;
    bool operator==(const Member&) const = default;
  };
  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::vector<Member> members;  // v3+
  TaggedFields tagged_fields;

  bool operator==(const LeaveGroupResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 1) io.Int32(throttle_time_ms);
    io.Int16(error_code);
    if (v >= 3) {
      io.Array(members, [&](Member& m) {
        io.String(m.member_id);
        io.NullableString(m.group_instance_id);
        io.Int16(m.error_code);
        io.TaggedFields(m.tagged_fields);
      });
    }
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_LEAVE_GROUP_H_
