// CreatePartitions (key 37), v0-3. Flexible from v2.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_PARTITIONS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_PARTITIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct CreatePartitionsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kCreatePartitions;
  struct Assignment {
    std::vector<int32_t> broker_ids;
    TaggedFields tagged_fields;
    bool operator==(const Assignment&) const = default;
  };
  struct Topic {
    std::string name;
    int32_t count = 0;  // the new total number of partitions
    // One per new partition; null lets the broker place them.
    std::optional<std::vector<Assignment>> assignments;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  std::vector<Topic> topics;
  int32_t timeout_ms = 0;
  bool validate_only = false;
  TaggedFields tagged_fields;

  bool operator==(const CreatePartitionsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Int32(t.count);
      io.NullableArray(t.assignments, [&](Assignment& a) {
        io.Array(a.broker_ids, [&](int32_t& id) { io.Int32(id); });
        io.TaggedFields(a.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.Int32(timeout_ms);
    io.Bool(validate_only);
    io.TaggedFields(tagged_fields);
  }
};

struct CreatePartitionsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kCreatePartitions;
  struct Result {
    std::string name;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    TaggedFields tagged_fields;
    bool operator==(const Result&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<Result> results;
  TaggedFields tagged_fields;

  bool operator==(const CreatePartitionsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(results, [&](Result& r) {
      io.String(r.name);
      io.Int16(r.error_code);
      io.NullableString(r.error_message);
      io.TaggedFields(r.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_PARTITIONS_H_
