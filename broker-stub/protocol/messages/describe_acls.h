// DescribeAcls (key 29), v0-3. Flexible from v2; v1 adds pattern types
// (KIP-290). Codes: resource type 1 any, 2 topic, 3 group, 4 cluster,
// 5 transactional id, 6 delegation token, 7 user (v3+); pattern type 1 any,
// 2 match, 3 literal, 4 prefixed; permission 1 any, 2 deny, 3 allow.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_ACLS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_ACLS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

// The pattern type that v0, which has none, implies.
inline constexpr int8_t kAclPatternLiteral = 3;

struct DescribeAclsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeAcls;
  int8_t resource_type_filter = 0;
  std::optional<std::string> resource_name_filter;  // null matches any
  int8_t pattern_type_filter = kAclPatternLiteral;  // v1+
  std::optional<std::string> principal_filter;
  std::optional<std::string> host_filter;
  int8_t operation = 0;
  int8_t permission_type = 0;
  TaggedFields tagged_fields;

  bool operator==(const DescribeAclsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int8(resource_type_filter);
    io.NullableString(resource_name_filter);
    if (io.version() >= 1) io.Int8(pattern_type_filter);
    io.NullableString(principal_filter);
    io.NullableString(host_filter);
    io.Int8(operation);
    io.Int8(permission_type);
    io.TaggedFields(tagged_fields);
  }
};

struct DescribeAclsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeAcls;
  struct Acl {
    std::string principal;
    std::string host;
    int8_t operation = 0;
    int8_t permission_type = 0;
    TaggedFields tagged_fields;
    bool operator==(const Acl&) const = default;
  };
  struct Resource {
    int8_t resource_type = 0;
    std::string resource_name;
    int8_t pattern_type = kAclPatternLiteral;  // v1+
    std::vector<Acl> acls;
    TaggedFields tagged_fields;
    bool operator==(const Resource&) const = default;
  };
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::vector<Resource> resources;
  TaggedFields tagged_fields;

  bool operator==(const DescribeAclsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.NullableString(error_message);
    io.Array(resources, [&](Resource& r) {
      io.Int8(r.resource_type);
      io.String(r.resource_name);
      if (v >= 1) io.Int8(r.pattern_type);
      io.Array(r.acls, [&](Acl& a) {
        io.String(a.principal);
        io.String(a.host);
        io.Int8(a.operation);
        io.Int8(a.permission_type);
        io.TaggedFields(a.tagged_fields);
      });
      io.TaggedFields(r.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_ACLS_H_
