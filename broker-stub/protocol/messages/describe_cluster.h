// DescribeCluster (key 60), v0 only, flexible from v0 (KIP-700).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_CLUSTER_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_CLUSTER_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DescribeClusterRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeCluster;
  bool include_cluster_authorized_operations = false;
  TaggedFields tagged_fields;

  bool operator==(const DescribeClusterRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Bool(include_cluster_authorized_operations);
    io.TaggedFields(tagged_fields);
  }
};

struct DescribeClusterResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeCluster;
  static constexpr int32_t kNoAuthorizedOperations =
      std::numeric_limits<int32_t>::min();
  struct Broker {
    int32_t broker_id = 0;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;
    TaggedFields tagged_fields;
    bool operator==(const Broker&) const = default;
  };
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::string cluster_id;
  int32_t controller_id = -1;
  std::vector<Broker> brokers;
  int32_t cluster_authorized_operations = kNoAuthorizedOperations;
  TaggedFields tagged_fields;

  bool operator==(const DescribeClusterResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.NullableString(error_message);
    io.String(cluster_id);
    io.Int32(controller_id);
    io.Array(brokers, [&](Broker& b) {
      io.Int32(b.broker_id);
      io.String(b.host);
      io.Int32(b.port);
      io.NullableString(b.rack);
      io.TaggedFields(b.tagged_fields);
    });
    io.Int32(cluster_authorized_operations);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_CLUSTER_H_
