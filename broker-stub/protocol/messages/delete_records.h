// DeleteRecords (key 21), v0-2. Flexible from v2. Moves each partition's log
// start offset forward.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_RECORDS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_RECORDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DeleteRecordsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteRecords;
  struct Partition {
    int32_t index = 0;
    int64_t offset = 0;  // delete before this; -1: the high watermark
    TaggedFields tagged_fields;
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  std::vector<Topic> topics;
  int32_t timeout_ms = 0;
  TaggedFields tagged_fields;

  bool operator==(const DeleteRecordsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int64(p.offset);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.Int32(timeout_ms);
    io.TaggedFields(tagged_fields);
  }
};

struct DeleteRecordsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteRecords;
  struct Partition {
    int32_t index = 0;
    int64_t low_watermark = -1;
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

  bool operator==(const DeleteRecordsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int64(p.low_watermark);
        io.Int16(p.error_code);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_RECORDS_H_
