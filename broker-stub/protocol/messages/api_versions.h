// ApiVersions (key 18), v0-3. Flexible from v3, but the response header never
// has tags.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_API_VERSIONS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_API_VERSIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct ApiVersionsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kApiVersions;
  std::string client_software_name;     // v3+
  std::string client_software_version;  // v3+
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    if (io.version() >= 3) {
      io.String(client_software_name);
      io.String(client_software_version);
    }
    io.TaggedFields(tagged_fields);
  }
};

struct ApiVersionsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kApiVersions;
  struct ApiVersion {
    int16_t api_key = 0;
    int16_t min_version = 0;
    int16_t max_version = 0;
    TaggedFields tagged_fields;
  };
  int16_t error_code = 0;
  std::vector<ApiVersion> api_keys;
  int32_t throttle_time_ms = 0;  // v1+
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    io.Int16(error_code);
    io.Array(api_keys, [&](ApiVersion& a) {
      io.Int16(a.api_key);
      io.Int16(a.min_version);
      io.Int16(a.max_version);
      io.TaggedFields(a.tagged_fields);
    });
    if (io.version() >= 1) io.Int32(throttle_time_ms);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_API_VERSIONS_H_
