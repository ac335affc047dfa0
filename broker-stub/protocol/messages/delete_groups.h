// DeleteGroups (key 42), v0-2. Flexible from v2.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_GROUPS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_GROUPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DeleteGroupsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteGroups;
  std::vector<std::string> group_names;  // Kafka's "GroupsNames"
  TaggedFields tagged_fields;

  bool operator==(const DeleteGroupsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(group_names, [&](std::string& g) { io.String(g); });
    io.TaggedFields(tagged_fields);
  }
};

struct DeleteGroupsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteGroups;
  struct Result {
    std::string group_id;
    int16_t error_code = 0;
    TaggedFields tagged_fields;
    bool operator==(const Result&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<Result> results;
  TaggedFields tagged_fields;

  bool operator==(const DeleteGroupsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(results, [&](Result& r) {
      io.String(r.group_id);
      io.Int16(r.error_code);
      io.TaggedFields(r.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_GROUPS_H_
