// WriteTxnMarkers (key 27), v0-1. Flexible from v1. Inter-broker: the
// transaction coordinator asks partition leaders to append COMMIT or ABORT
// control records.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_WRITE_TXN_MARKERS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_WRITE_TXN_MARKERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct WriteTxnMarkersRequest {
  static constexpr ApiKey kApiKey = ApiKey::kWriteTxnMarkers;
  struct Topic {
    std::string name;
    std::vector<int32_t> partition_indexes;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  struct Marker {
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    bool transaction_result = false;  // true: COMMIT, false: ABORT
    std::vector<Topic> topics;
    int32_t coordinator_epoch = 0;
    TaggedFields tagged_fields;
    bool operator==(const Marker&) const = default;
  };
  std::vector<Marker> markers;
  TaggedFields tagged_fields;

  bool operator==(const WriteTxnMarkersRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(markers, [&](Marker& m) {
      io.Int64(m.producer_id);
      io.Int16(m.producer_epoch);
      io.Bool(m.transaction_result);
      io.Array(m.topics, [&](Topic& t) {
        io.String(t.name);
        io.Array(t.partition_indexes, [&](int32_t& p) { io.Int32(p); });
        io.TaggedFields(t.tagged_fields);
      });
      io.Int32(m.coordinator_epoch);
      io.TaggedFields(m.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct WriteTxnMarkersResponse {
  static constexpr ApiKey kApiKey = ApiKey::kWriteTxnMarkers;
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
  struct Marker {
    int64_t producer_id = -1;
    std::vector<Topic> topics;
    TaggedFields tagged_fields;
    bool operator==(const Marker&) const = default;
  };
  std::vector<Marker> markers;
  TaggedFields tagged_fields;

  bool operator==(const WriteTxnMarkersResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(markers, [&](Marker& m) {
      io.Int64(m.producer_id);
      io.Array(m.topics, [&](Topic& t) {
        io.String(t.name);
        io.Array(t.partitions, [&](Partition& p) {
          io.Int32(p.index);
          io.Int16(p.error_code);
          io.TaggedFields(p.tagged_fields);
        });
        io.TaggedFields(t.tagged_fields);
      });
      io.TaggedFields(m.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_WRITE_TXN_MARKERS_H_
