// FindCoordinator (key 10), v0-4. Flexible from v3; v4 asks for many keys at
// once (KIP-699) and answers with one Coordinator per key.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_FIND_COORDINATOR_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_FIND_COORDINATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

// FindCoordinator key types (v1+; v0 only knows groups).
inline constexpr int8_t kCoordinatorKeyGroup = 0;
inline constexpr int8_t kCoordinatorKeyTransaction = 1;

struct FindCoordinatorRequest {
  static constexpr ApiKey kApiKey = ApiKey::kFindCoordinator;
  std::string key;                            // v0-3
  int8_t key_type = kCoordinatorKeyGroup;     // v1+
  std::vector<std::string> coordinator_keys;  // v4+
  TaggedFields tagged_fields;

  bool operator==(const FindCoordinatorRequest&) const = default;

  // The keys asked about, in either form.
  std::vector<std::string> Keys(int16_t version) const {
    return version >= 4 ? coordinator_keys : std::vector<std::string>{key};
  }

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v <= 3) io.String(key);
    if (v >= 1) io.Int8(key_type);
    if (v >= 4) {
      io.Array(coordinator_keys, [&](std::string& k) { io.String(k); });
    }
    io.TaggedFields(tagged_fields);
  }
};

struct FindCoordinatorResponse {
  static constexpr ApiKey kApiKey = ApiKey::kFindCoordinator;
  struct Coordinator {
    std::string key;
    int32_t node_id = 0;
    std::string host;
    int32_t port = 0;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    TaggedFields tagged_fields;
    bool operator==(const Coordinator&) const = default;
  };
  int32_t throttle_time_ms = 0;              // v1+
  int16_t error_code = 0;                    // v0-3
  std::optional<std::string> error_message;  // v1-3
  int32_t node_id = 0;                       // v0-3
  std::string host;                          // v0-3
  int32_t port = 0;                          // v0-3
  std::vector<Coordinator> coordinators;     // v4+
  TaggedFields tagged_fields;

  bool operator==(const FindCoordinatorResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    if (v >= 1) io.Int32(throttle_time_ms);
    if (v <= 3) {
      io.Int16(error_code);
      if (v >= 1) io.NullableString(error_message);
      io.Int32(node_id);
      io.String(host);
      io.Int32(port);
    } else {
      io.Array(coordinators, [&](Coordinator& c) {
        io.String(c.key);
        io.Int32(c.node_id);
        io.String(c.host);
        io.Int32(c.port);
        io.Int16(c.error_code);
        io.NullableString(c.error_message);
        io.TaggedFields(c.tagged_fields);
      });
    }
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_FIND_COORDINATOR_H_
