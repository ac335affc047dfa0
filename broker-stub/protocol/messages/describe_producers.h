// DescribeProducers (key 61), v0. Flexible from v0. KIP-664: the producers a
// partition leader knows, and where each one's open transaction starts, so an
// operator can find a hanging transaction.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_PRODUCERS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_PRODUCERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DescribeProducersRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeProducers;
  struct Topic {
    std::string name;
    std::vector<int32_t> partition_indexes;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const DescribeProducersRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partition_indexes, [&](int32_t& p) { io.Int32(p); });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct DescribeProducersResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeProducers;
  struct Producer {
    int64_t producer_id = -1;
    int32_t producer_epoch = -1;  // an int32 on the wire, unlike elsewhere
    int32_t last_sequence = -1;
    int64_t last_timestamp = -1;
    int32_t coordinator_epoch = -1;
    int64_t current_txn_start_offset = -1;  // -1: no open transaction
    TaggedFields tagged_fields;
    bool operator==(const Producer&) const = default;
  };
  struct Partition {
    int32_t index = 0;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::vector<Producer> active_producers;
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

  bool operator==(const DescribeProducersResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int16(p.error_code);
        io.NullableString(p.error_message);
        io.Array(p.active_producers, [&](Producer& s) {
          io.Int64(s.producer_id);
          io.Int32(s.producer_epoch);
          io.Int32(s.last_sequence);
          io.Int64(s.last_timestamp);
          io.Int32(s.coordinator_epoch);
          io.Int64(s.current_txn_start_offset);
          io.TaggedFields(s.tagged_fields);
        });
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_PRODUCERS_H_
