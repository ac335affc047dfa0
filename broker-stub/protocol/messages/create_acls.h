// CreateAcls (key 30), v0-3. Flexible from v2; v1 adds pattern types. The
// codes are listed in describe_acls.h.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_ACLS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_ACLS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages/describe_acls.h"
#include "protocol/serde.h"

namespace exactly::protocol {

struct CreateAclsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kCreateAcls;
  struct Creation {
    int8_t resource_type = 0;
    std::string resource_name;
    int8_t resource_pattern_type = kAclPatternLiteral;  // v1+
    std::string principal;
    std::string host;
    int8_t operation = 0;
    int8_t permission_type = 0;
    TaggedFields tagged_fields;
    bool operator==(const Creation&) const = default;
  };
  std::vector<Creation> creations;
  TaggedFields tagged_fields;

  bool operator==(const CreateAclsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(creations, [&](Creation& c) {
      io.Int8(c.resource_type);
      io.String(c.resource_name);
      if (io.version() >= 1) io.Int8(c.resource_pattern_type);
      io.String(c.principal);
      io.String(c.host);
      io.Int8(c.operation);
      io.Int8(c.permission_type);
      io.TaggedFields(c.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct CreateAclsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kCreateAcls;
  struct Result {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    TaggedFields tagged_fields;
    bool operator==(const Result&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<Result> results;  // one per creation, in order
  TaggedFields tagged_fields;

  bool operator==(const CreateAclsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(results, [&](Result& r) {
      io.Int16(r.error_code);
      io.NullableString(r.error_message);
      io.TaggedFields(r.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_CREATE_ACLS_H_
