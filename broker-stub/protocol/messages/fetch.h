// Fetch (key 1), v0-11 (flexible from v12, which no client we serve sends).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_FETCH_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_FETCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct FetchRequest {
  static constexpr ApiKey kApiKey = ApiKey::kFetch;
  struct Partition {
    int32_t index = 0;
    int32_t current_leader_epoch = -1;  // v9+
    int64_t fetch_offset = 0;
    int64_t log_start_offset = -1;  // v5+
    int32_t max_bytes = 0;
    TaggedFields tagged_fields;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
  };
  struct ForgottenTopic {
    std::string name;
    std::vector<int32_t> partitions;
    TaggedFields tagged_fields;
  };
  int32_t replica_id = -1;
  int32_t max_wait_ms = 0;
  int32_t min_bytes = 0;
  int32_t max_bytes = 0x7fffffff;  // v3+
  int8_t isolation_level = 0;      // v4+: 0 read_uncommitted, 1 read_committed
  int32_t session_id = 0;          // v7+
  int32_t session_epoch = -1;      // v7+
  std::vector<Topic> topics;
  std::vector<ForgottenTopic> forgotten_topics;  // v7+
  std::string rack_id;                           // v11+
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.Int32(replica_id);
    io.Int32(max_wait_ms);
    io.Int32(min_bytes);
    if (v >= 3) io.Int32(max_bytes);
    if (v >= 4) io.Int8(isolation_level);
    if (v >= 7) {
      io.Int32(session_id);
      io.Int32(session_epoch);
    }
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        if (v >= 9) io.Int32(p.current_leader_epoch);
        io.Int64(p.fetch_offset);
        if (v >= 5) io.Int64(p.log_start_offset);
        io.Int32(p.max_bytes);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    if (v >= 7) {
      io.Array(forgotten_topics, [&](ForgottenTopic& f) {
        io.String(f.name);
        io.Array(f.partitions, [&](int32_t& p) { io.Int32(p); });
        io.TaggedFields(f.tagged_fields);
      });
    }
    if (v >= 11) io.String(rack_id);
    io.TaggedFields(tagged_fields);
  }
};

struct FetchResponse {
  static constexpr ApiKey kApiKey = ApiKey::kFetch;
  struct AbortedTransaction {
    int64_t producer_id = 0;
    int64_t first_offset = 0;
    TaggedFields tagged_fields;
  };
  struct Partition {
    int32_t index = 0;
    int16_t error_code = 0;
    int64_t high_watermark = -1;
    int64_t last_stable_offset = -1;  // v4+
    int64_t log_start_offset = -1;    // v5+
    // v4+; null for read_uncommitted fetches.
    std::optional<std::vector<AbortedTransaction>> aborted_transactions;
    int32_t preferred_read_replica = -1;  // v11+
    RecordSet records;
    TaggedFields tagged_fields;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    TaggedFields tagged_fields;
  };
  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;        // v7+
  int32_t session_id = 0;        // v7+
  std::vector<Topic> topics;
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 1) io.Int32(throttle_time_ms);
    if (v >= 7) {
      io.Int16(error_code);
      io.Int32(session_id);
    }
    io.Array(topics, [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int16(p.error_code);
        io.Int64(p.high_watermark);
        if (v >= 4) io.Int64(p.last_stable_offset);
        if (v >= 5) io.Int64(p.log_start_offset);
        if (v >= 4) {
          io.NullableArray(p.aborted_transactions, [&](AbortedTransaction& a) {
            io.Int64(a.producer_id);
            io.Int64(a.first_offset);
            io.TaggedFields(a.tagged_fields);
          });
        }
        if (v >= 11) io.Int32(p.preferred_read_replica);
        io.Records(p.records);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_FETCH_H_
