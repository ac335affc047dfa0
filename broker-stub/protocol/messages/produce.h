// Produce (key 0), v0-8 (flexible from v9, which no client we serve sends).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_PRODUCE_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_PRODUCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct ProduceRequest {
  static constexpr ApiKey kApiKey = ApiKey::kProduce;
  struct Partition {
    int32_t index = 0;
    RecordSet records;
    TaggedFields tagged_fields;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
  };
  std::optional<std::string> transactional_id;  // v3+
  int16_t acks = -1;
  int32_t timeout_ms = 0;
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    if (io.version() >= 3) io.NullableString(transactional_id);
    io.Int16(acks);
    io.Int32(timeout_ms);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Records(p.records);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct ProduceResponse {
  static constexpr ApiKey kApiKey = ApiKey::kProduce;
  struct RecordError {
    int32_t batch_index = 0;
    std::optional<std::string> message;
    TaggedFields tagged_fields;
  };
  struct Partition {
    int32_t index = 0;
    int16_t error_code = 0;
    int64_t base_offset = -1;
    int64_t log_append_time_ms = -1;           // v2+
    int64_t log_start_offset = -1;             // v5+
    std::vector<RecordError> record_errors;    // v8+
    std::optional<std::string> error_message;  // v8+
    TaggedFields tagged_fields;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
  };
  std::vector<Topic> topics;
  int32_t throttle_time_ms = 0;  // v1+
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int16(p.error_code);
        io.Int64(p.base_offset);
        if (io.version() >= 2) io.Int64(p.log_append_time_ms);
        if (io.version() >= 5) io.Int64(p.log_start_offset);
        if (io.version() >= 8) {
          io.Array(p.record_errors, [&](RecordError& e) {
            io.Int32(e.batch_index);
            io.NullableString(e.message);
            io.TaggedFields(e.tagged_fields);
          });
          io.NullableString(p.error_message);
        }
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    if (io.version() >= 1) io.Int32(throttle_time_ms);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_PRODUCE_H_
