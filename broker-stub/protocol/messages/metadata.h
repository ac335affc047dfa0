// Metadata (key 3), v0-8 (flexible from v9, which no client we serve sends).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_METADATA_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_METADATA_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct MetadataRequest {
  static constexpr ApiKey kApiKey = ApiKey::kMetadata;
  struct Topic {
    std::string name;
    TaggedFields tagged_fields;
  };
  // Null asks for every topic (v1+). In v0 the array cannot be null, and empty
  // means every topic.
  std::optional<std::vector<Topic>> topics;
  bool allow_auto_topic_creation = true;               // v4+
  bool include_cluster_authorized_operations = false;  // v8+
  bool include_topic_authorized_operations = false;    // v8+
  TaggedFields tagged_fields;

  // Whether the request names no topic and so asks for all of them.
  bool AllTopics(int16_t version) const {
    return !topics || (version == 0 && topics->empty());
  }

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    auto topic = [&](Topic& t) {
      io.String(t.name);
      io.TaggedFields(t.tagged_fields);
    };
    // v0 cannot say null: an empty array asks for every topic there.
    ArrayNullableIf(io, topics, v >= 1, topic);
    if (v >= 4) io.Bool(allow_auto_topic_creation);
    if (v >= 8) {
      io.Bool(include_cluster_authorized_operations);
      io.Bool(include_topic_authorized_operations);
    }
    io.TaggedFields(tagged_fields);
  }
};

struct MetadataResponse {
  static constexpr ApiKey kApiKey = ApiKey::kMetadata;
  static constexpr int32_t kNoAuthorizedOperations =
      std::numeric_limits<int32_t>::min();
  struct Broker {
    int32_t node_id = 0;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;  // v1+
    TaggedFields tagged_fields;
  };
  struct Partition {
    int16_t error_code = 0;
    int32_t index = 0;
    int32_t leader_id = -1;
    int32_t leader_epoch = -1;  // v7+
    std::vector<int32_t> replica_nodes;
    std::vector<int32_t> isr_nodes;
    std::vector<int32_t> offline_replicas;  // v5+
    TaggedFields tagged_fields;
  };
  struct Topic {
    int16_t error_code = 0;
    std::string name;
    bool is_internal = false;  // v1+
    std::vector<Partition> partitions;
    int32_t topic_authorized_operations = kNoAuthorizedOperations;  // v8+
    TaggedFields tagged_fields;
  };
  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Broker> brokers;
  std::optional<std::string> cluster_id;  // v2+
  int32_t controller_id = -1;             // v1+
  std::vector<Topic> topics;
  int32_t cluster_authorized_operations = kNoAuthorizedOperations;  // v8+
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    auto int32s = [&](std::vector<int32_t>& list) {
      io.Array(list, [&](int32_t& n) { io.Int32(n); });
    };
    if (v >= 3) io.Int32(throttle_time_ms);
    io.Array(brokers, [&](Broker& b) {
      io.Int32(b.node_id);
      io.String(b.host);
      io.Int32(b.port);
      if (v >= 1) io.NullableString(b.rack);
      io.TaggedFields(b.tagged_fields);
    });
    if (v >= 2) io.NullableString(cluster_id);
    if (v >= 1) io.Int32(controller_id);
    io.Array(topics, [&](Topic& t) {
      io.Int16(t.error_code);
      io.String(t.name);
      if (v >= 1) io.Bool(t.is_internal);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int16(p.error_code);
        io.Int32(p.index);
        io.Int32(p.leader_id);
        if (v >= 7) io.Int32(p.leader_epoch);
        int32s(p.replica_nodes);
        int32s(p.isr_nodes);
        if (v >= 5) int32s(p.offline_replicas);
        io.TaggedFields(p.tagged_fields);
      });
      if (v >= 8) io.Int32(t.topic_authorized_operations);
      io.TaggedFields(t.tagged_fields);
    });
    if (v >= 8) io.Int32(cluster_authorized_operations);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_METADATA_H_
