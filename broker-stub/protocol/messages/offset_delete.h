// OffsetDelete (key 47), v0 only, never flexible (KIP-496).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_DELETE_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_DELETE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct OffsetDeleteRequest {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetDelete;
  struct Partition {
    int32_t index = 0;
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
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const OffsetDeleteRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.String(group_id);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct OffsetDeleteResponse {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetDelete;
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
  // Unlike most responses, the error comes before the throttle time.
  int16_t error_code = 0;
  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const OffsetDeleteResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int16(error_code);
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

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_OFFSET_DELETE_H_
