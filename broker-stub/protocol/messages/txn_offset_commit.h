// TxnOffsetCommit (key 28), v0-3. Flexible from v3; v3 adds the consumer's
// group metadata so the coordinator can fence zombies (KIP-447).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_TXN_OFFSET_COMMIT_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_TXN_OFFSET_COMMIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct TxnOffsetCommitRequest {
  static constexpr ApiKey kApiKey = ApiKey::kTxnOffsetCommit;
  struct Partition {
    int32_t index = 0;
    int64_t committed_offset = 0;
    int32_t committed_leader_epoch = -1;  // v2+
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
  std::string transactional_id;
  std::string group_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t generation_id = -1;                    // v3+
  std::string member_id;                         // v3+
  std::optional<std::string> group_instance_id;  // v3+
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const TxnOffsetCommitRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.String(transactional_id);
    io.String(group_id);
    io.Int64(producer_id);
    io.Int16(producer_epoch);
    if (v >= 3) {
      io.Int32(generation_id);
      io.String(member_id);
      io.NullableString(group_instance_id);
    }
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int64(p.committed_offset);
        if (v >= 2) io.Int32(p.committed_leader_epoch);
        io.NullableString(p.committed_metadata);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct TxnOffsetCommitResponse {
  static constexpr ApiKey kApiKey = ApiKey::kTxnOffsetCommit;
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
  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const TxnOffsetCommitResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
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

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_TXN_OFFSET_COMMIT_H_
