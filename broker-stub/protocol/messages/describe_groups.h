// DescribeGroups (key 15), v0-5. Flexible from v5.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_GROUPS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_GROUPS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DescribeGroupsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeGroups;
  std::vector<std::string> groups;
  bool include_authorized_operations = false;  // v3+
  TaggedFields tagged_fields;

  bool operator==(const DescribeGroupsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(groups, [&](std::string& g) { io.String(g); });
    if (io.version() >= 3) io.Bool(include_authorized_operations);
    io.TaggedFields(tagged_fields);
  }
};

struct DescribeGroupsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeGroups;
  static constexpr int32_t kNoAuthorizedOperations =
      std::numeric_limits<int32_t>::min();
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // v4+
    std::string client_id;
    std::string client_host;
    std::string member_metadata;
    std::string member_assignment;
    TaggedFields tagged_fields;
    bool operator==(const Member&) const = default;
  };
  struct Group {
    int16_t error_code = 0;
    std::string group_id;
    std::string group_state;    // "Stable", "Empty", "Dead", ...
    std::string protocol_type;  // e.g. "consumer"
    std::string protocol_data;  // the chosen protocol, e.g. "range"
    std::vector<Member> members;
    int32_t authorized_operations = kNoAuthorizedOperations;  // v3+
    TaggedFields tagged_fields;
    bool operator==(const Group&) const = default;
  };
  int32_t throttle_time_ms = 0;  // v1+
  std::vector<Group> groups;
  TaggedFields tagged_fields;

  bool operator==(const DescribeGroupsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 1) io.Int32(throttle_time_ms);
    io.Array(groups, [&](Group& g) {
      io.Int16(g.error_code);
      io.String(g.group_id);
      io.String(g.group_state);
      io.String(g.protocol_type);
      io.String(g.protocol_data);
      io.Array(g.members, [&](Member& m) {
        io.String(m.member_id);
        if (v >= 4) io.NullableString(m.group_instance_id);
        io.String(m.client_id);
        io.String(m.client_host);
        io.Bytes(m.member_metadata);
        io.Bytes(m.member_assignment);
        io.TaggedFields(m.tagged_fields);
      });
      if (v >= 3) io.Int32(g.authorized_operations);
      io.TaggedFields(g.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_GROUPS_H_
