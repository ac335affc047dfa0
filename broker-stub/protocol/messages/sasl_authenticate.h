// SaslAuthenticate (key 36), v0-2. Flexible from v2; v1 adds the session
// lifetime (KIP-368).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_SASL_AUTHENTICATE_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_SASL_AUTHENTICATE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/serde.h"

namespace exactly::protocol {

struct SaslAuthenticateRequest {
  static constexpr ApiKey kApiKey = ApiKey::kSaslAuthenticate;
  std::string auth_bytes;  // the mechanism's token
  TaggedFields tagged_fields;

  bool operator==(const SaslAuthenticateRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Bytes(auth_bytes);
    io.TaggedFields(tagged_fields);
  }
};

struct SaslAuthenticateResponse {
  static constexpr ApiKey kApiKey = ApiKey::kSaslAuthenticate;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::string auth_bytes;
  int64_t session_lifetime_ms = 0;  // v1+; 0: no re-authentication needed
  TaggedFields tagged_fields;

  bool operator==(const SaslAuthenticateResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int16(error_code);
    io.NullableString(error_message);
    io.Bytes(auth_bytes);
    if (io.version() >= 1) io.Int64(session_lifetime_ms);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_SASL_AUTHENTICATE_H_
