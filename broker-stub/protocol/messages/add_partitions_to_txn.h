// AddPartitionsToTxn (key 24), v0-3. Flexible from v3. The versions differ
// only in encoding and in which fencing error the broker returns.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_PARTITIONS_TO_TXN_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_PARTITIONS_TO_TXN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct AddPartitionsToTxnRequest {
  static constexpr ApiKey kApiKey = ApiKey::kAddPartitionsToTxn;
  struct Topic {
    std::string name;
    std::vector<int32_t> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  bool operator==(const AddPartitionsToTxnRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.String(transactional_id);
    io.Int64(producer_id);
    io.Int16(producer_epoch);
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](int32_t& p) { io.Int32(p); });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct AddPartitionsToTxnResponse {
  static constexpr ApiKey kApiKey = ApiKey::kAddPartitionsToTxn;
  struct Partition {
    int32_t index = 0;
    int16_t error_code = 0;
    TaggedFields tagged_fields;
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;  // Kafka's "Results"
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;  // Kafka's "Results"
  TaggedFields tagged_fields;

  bool operator==(const AddPartitionsToTxnResponse&) const = default;

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

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_PARTITIONS_TO_TXN_H_
