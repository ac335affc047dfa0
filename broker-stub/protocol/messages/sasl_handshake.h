// SaslHandshake (key 17), v0-1, never flexible. After v0 the SASL tokens
// follow as raw frames; after v1 they travel in SaslAuthenticate requests.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_SASL_HANDSHAKE_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_SASL_HANDSHAKE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct SaslHandshakeRequest {
  static constexpr ApiKey kApiKey = ApiKey::kSaslHandshake;
  std::string mechanism;  // e.g. "PLAIN"
  TaggedFields tagged_fields;

  bool operator==(const SaslHandshakeRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.String(mechanism);
    io.TaggedFields(tagged_fields);
  }
};

struct SaslHandshakeResponse {
  static constexpr ApiKey kApiKey = ApiKey::kSaslHandshake;
  int16_t error_code = 0;
  std::vector<std::string> mechanisms;  // the ones the broker enables
  TaggedFields tagged_fields;

  bool operator==(const SaslHandshakeResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int16(error_code);
    io.Array(mechanisms, [&](std::string& m) { io.String(m); });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_SASL_HANDSHAKE_H_
