// ListGroups (key 16), v0-5. Flexible from v3; v4 filters by group state
// (KIP-518), v5 by group type and names each group's type (KIP-848). librdkafka
// < 2.1.0 ends v3+ requests with a second, empty tag section: decode them with
// allow_trailing (see the wire samples' README).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_GROUPS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_GROUPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct ListGroupsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kListGroups;
  std::vector<std::string> states_filter;  // v4+; empty: any state
  std::vector<std::string> types_filter;   // v5+; empty: any type
  TaggedFields tagged_fields;

  bool operator==(const ListGroupsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    if (io.version() >= 4) {
      io.Array(states_filter, [&](std::string& s) { io.String(s); });
    }
    if (io.version() >= 5) {
      io.Array(types_filter, [&](std::string& s) { io.String(s); });
    }
    io.TaggedFields(tagged_fields);
  }
};

struct ListGroupsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kListGroups;
  struct Group {
    std::string group_id;
    std::string protocol_type;
    std::string group_state;  // v4+
    std::string group_type;   // v5+: "classic" here (no KIP-848 groups)
    TaggedFields tagged_fields;
    bool operator==(const Group&) const = default;
  };
  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::vector<Group> groups;
  TaggedFields tagged_fields;

  bool operator==(const ListGroupsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 1) io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.Array(groups, [&](Group& g) {
      io.String(g.group_id);
      io.String(g.protocol_type);
      if (v >= 4) io.String(g.group_state);
      if (v >= 5) io.String(g.group_type);
      io.TaggedFields(g.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_GROUPS_H_
