// OffsetCommit (key 8), v0-8. Flexible from v8. v1 alone carries a commit
// timestamp per partition, v2-4 a retention time for the whole request.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_COMMIT_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_COMMIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct OffsetCommitRequest {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetCommit;
  struct Partition {
    int32_t index = 0;
    int64_t committed_offset = 0;
    int32_t committed_leader_epoch = -1;  // v6+
    int64_t commit_timestamp = -1;        // v1 only
    std::optional<std::string> committed_metadata;
    TaggedFields tagged_fields;
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  std::string group_id;
  // v1+; -1 and "" for a commit from outside the group (e.g. admin tools).
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v7+
  int64_t retention_time_ms = -1;                // v2-4; -1: broker default
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const OffsetCommitRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.String(group_id);
    if (v >= 1) {
      io.Int32(generation_id);
      io.String(member_id);
    }
    if (v >= 7) io.NullableString(group_instance_id);
    if (v >= 2 && v <= 4) io.Int64(retention_time_ms);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int64(p.committed_offset);
        if (v >= 6) io.Int32(p.committed_leader_epoch);
        if (v == 1) io.Int64(p.commit_timestamp);
        io.NullableString(p.committed_metadata);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct OffsetCommitResponse {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetCommit;
  struct Partition {
    int32_t index = 0;
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
  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const OffsetCommitResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    if (io.version() >= 3) io.Int32(throttle_time_ms);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int16(p.error_code);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_COMMIT_H_
