// DeleteAcls (key 31), v0-3. Flexible from v2; v1 adds pattern types. The
// codes are listed in describe_acls.h.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_ACLS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_ACLS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages/describe_acls.h"
#include "protocol/serde.h"

namespace exactly::protocol {

struct DeleteAclsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteAcls;
  struct Filter {
    int8_t resource_type_filter = 0;
    std::optional<std::string> resource_name_filter;
    int8_t pattern_type_filter = kAclPatternLiteral;  // v1+
    std::optional<std::string> principal_filter;
    std::optional<std::string> host_filter;
    int8_t operation = 0;
    int8_t permission_type = 0;
    TaggedFields tagged_fields;
    bool operator==(const Filter&) const = default;
  };
  std::vector<Filter> filters;
  TaggedFields tagged_fields;

  bool operator==(const DeleteAclsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(filters, [&](Filter& f) {
      io.Int8(f.resource_type_filter);
      io.NullableString(f.resource_name_filter);
      if (io.version() >= 1) io.Int8(f.pattern_type_filter);
      io.NullableString(f.principal_filter);
      io.NullableString(f.host_filter);
      io.Int8(f.operation);
      io.Int8(f.permission_type);
      io.TaggedFields(f.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct DeleteAclsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDeleteAcls;
  struct MatchingAcl {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    int8_t resource_type = 0;
    std::string resource_name;
    int8_t pattern_type = kAclPatternLiteral;  // v1+
    std::string principal;
    std::string host;
    int8_t operation = 0;
    int8_t permission_type = 0;
    TaggedFields tagged_fields;
    bool operator==(const MatchingAcl&) const = default;
  };
  struct FilterResult {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::vector<MatchingAcl> matching_acls;
    TaggedFields tagged_fields;
    bool operator==(const FilterResult&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<FilterResult> filter_results;  // one per filter, in order
  TaggedFields tagged_fields;

  bool operator==(const DeleteAclsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(filter_results, [&](FilterResult& f) {
      io.Int16(f.error_code);
      io.NullableString(f.error_message);
      io.Array(f.matching_acls, [&](MatchingAcl& m) {
        io.Int16(m.error_code);
        io.NullableString(m.error_message);
        io.Int8(m.resource_type);
        io.String(m.resource_name);
        if (io.version() >= 1) io.Int8(m.pattern_type);
        io.String(m.principal);
        io.String(m.host);
        io.Int8(m.operation);
        io.Int8(m.permission_type);
        io.TaggedFields(m.tagged_fields);
      });
      io.TaggedFields(f.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DELETE_ACLS_H_
