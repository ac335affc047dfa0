// OffsetFetch (key 9), v0-8. Flexible from v6. v7 adds RequireStable
// (KIP-447); v8 asks about many groups at once and answers per group, with the
// single-group fields of v0-7 gone.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_FETCH_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_FETCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct OffsetFetchRequest {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetFetch;
  struct Topic {
    std::string name;
    std::vector<int32_t> partition_indexes;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  struct Group {
    std::string group_id;
    std::optional<std::vector<Topic>> topics;  // null: every topic
    TaggedFields tagged_fields;
    bool operator==(const Group&) const = default;
  };
  std::string group_id;  // v0-7
  // v0-7. Null asks for every topic the group has offsets for; v0-1 cannot say
  // that (a null there is written as an empty array).
  std::optional<std::vector<Topic>> topics;
  std::vector<Group> groups;    // v8+
  bool require_stable = false;  // v7+
  TaggedFields tagged_fields;

  bool operator==(const OffsetFetchRequest&) const = default;

  // The groups asked about, in either form (tagged fields of the v0-7 form
  // stay at the top level and are not copied).
  std::vector<Group> Groups(int16_t version) const {
    if (version >= 8) return groups;
    return {Group{group_id, topics, {}}};
  }

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    auto topic = [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partition_indexes, [&](int32_t& p) { io.Int32(p); });
      io.TaggedFields(t.tagged_fields);
    };
    if (v <= 7) {
      io.String(group_id);
      ArrayNullableIf(io, topics, v >= 2, topic);
    } else {
      io.Array(groups, [&](Group& g) {
        io.String(g.group_id);
        io.NullableArray(g.topics, topic);
        io.TaggedFields(g.tagged_fields);
      });
    }
    if (v >= 7) io.Bool(require_stable);
    io.TaggedFields(tagged_fields);
  }
};

struct OffsetFetchResponse {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetFetch;
  struct Partition {
    int32_t index = 0;
    int64_t committed_offset = -1;        // -1: nothing committed
    int32_t committed_leader_epoch = -1;  // v5+
    std::optional<std::string> metadata;
    int16_t error_code = 0;
    TaggedFields tagged_fields;
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  struct Group {
    std::string group_id;
    std::vector<Topic> topics;
    int16_t error_code = 0;
    TaggedFields tagged_fields;
    bool operator==(const Group&) const = default;
  };
  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Topic> topics;     // v0-7
  int16_t error_code = 0;        // v2-7
  std::vector<Group> groups;     // v8+
  TaggedFields tagged_fields;

  bool operator==(const OffsetFetchResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    auto topic = [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int64(p.committed_offset);
        if (v >= 5) io.Int32(p.committed_leader_epoch);
        io.NullableString(p.metadata);
        io.Int16(p.error_code);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    };
    if (v >= 3) io.Int32(throttle_time_ms);
    if (v <= 7) {
      io.Array(topics, topic);
      if (v >= 2) io.Int16(error_code);
    } else {
      io.Array(groups, [&](Group& g) {
        io.String(g.group_id);
        io.Array(g.topics, topic);
        io.Int16(g.error_code);
        io.TaggedFields(g.tagged_fields);
      });
    }
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_FETCH_H_
