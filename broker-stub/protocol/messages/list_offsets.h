// ListOffsets (key 2), v0-8 (flexible from v6).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_OFFSETS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_OFFSETS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

// The special timestamps a ListOffsets partition may ask for.
inline constexpr int64_t kListOffsetsLatest = -1;
inline constexpr int64_t kListOffsetsEarliest = -2;
// The record with the largest timestamp (v7+, KIP-734).
inline constexpr int64_t kListOffsetsMaxTimestamp = -3;
// The first offset kept locally (v8+, KIP-405): with no tiered storage, the
// log start.
inline constexpr int64_t kListOffsetsEarliestLocal = -4;

struct ListOffsetsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kListOffsets;
  struct Partition {
    int32_t index = 0;
    int32_t current_leader_epoch = -1;  // v4+
    int64_t timestamp = kListOffsetsLatest;
    int32_t max_num_offsets = 1;  // v0 only
    TaggedFields tagged_fields;
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  int32_t replica_id = -1;
  int8_t isolation_level = 0;  // v2+
  std::vector<Topic> topics;
  TaggedFields tagged_fields;
  bool operator==(const ListOffsetsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.Int32(replica_id);
    if (v >= 2) io.Int8(isolation_level);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        if (v >= 4) io.Int32(p.current_leader_epoch);
        io.Int64(p.timestamp);
        if (v == 0) io.Int32(p.max_num_offsets);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct ListOffsetsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kListOffsets;
  struct Partition {
    int32_t index = 0;
    int16_t error_code = 0;
    std::vector<int64_t> old_style_offsets;  // v0 only
    int64_t timestamp = -1;                  // v1+
    int64_t offset = -1;                     // v1+
    int32_t leader_epoch = -1;               // v4+
    TaggedFields tagged_fields;
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  int32_t throttle_time_ms = 0;  // v2+
  std::vector<Topic> topics;
  TaggedFields tagged_fields;
  bool operator==(const ListOffsetsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 2) io.Int32(throttle_time_ms);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int16(p.error_code);
        if (v == 0) {
          io.Array(p.old_style_offsets, [&](int64_t& o) { io.Int64(o); });
        } else {
          io.Int64(p.timestamp);
          io.Int64(p.offset);
        }
        if (v >= 4) io.Int32(p.leader_epoch);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_OFFSETS_H_
