// OffsetForLeaderEpoch (key 23), v0-4. Flexible from v4.
//
// "Where does epoch E end on your log?": a follower asks its new leader before
// it fetches, to truncate what the leader does not have (KIP-101, KIP-279); a
// consumer asks after a leader change, to detect a log truncated under it
// (KIP-320).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_FOR_LEADER_EPOCH_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_FOR_LEADER_EPOCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct OffsetForLeaderEpochRequest {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetForLeaderEpoch;
  struct Partition {
    int32_t index = 0;
    int32_t current_leader_epoch = -1;  // v2+: fences stale askers
    int32_t leader_epoch = -1;          // the epoch whose end is asked for
    TaggedFields tagged_fields;
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  // v3+: the asking follower's node id; -1 for a consumer (and before v3).
  int32_t replica_id = -1;
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const OffsetForLeaderEpochRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 3) io.Int32(replica_id);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        if (v >= 2) io.Int32(p.current_leader_epoch);
        io.Int32(p.leader_epoch);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct OffsetForLeaderEpochResponse {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetForLeaderEpoch;
  struct Partition {
    int16_t error_code = 0;
    int32_t index = 0;
    int32_t leader_epoch = -1;  // v1+: the epoch the end offset belongs to
    int64_t end_offset = -1;
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

  bool operator==(const OffsetForLeaderEpochResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 2) io.Int32(throttle_time_ms);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int16(p.error_code);
        io.Int32(p.index);
        if (v >= 1) io.Int32(p.leader_epoch);
        io.Int64(p.end_offset);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_FOR_LEADER_EPOCH_H_
