#include "protocol/request_header.h"

namespace exactly::protocol {

absl::StatusOr<ParsedRequest> ParseRequest(std::string_view request) {
  ParsedRequest parsed;
  RequestHeader& h = parsed.header;
  // The fixed part reads the same in every header version.
  Decoder fixed(request, 0, false);
  fixed.Int16(h.api_key);
  fixed.Int16(h.api_version);
  fixed.Int32(h.correlation_id);
  fixed.LegacyNullableString(h.client_id);
  if (!fixed.ok()) return fixed.status();
  size_t consumed = fixed.position();
  if (h.flexible()) {
    Decoder tags(request.substr(consumed), h.api_version, true);
    tags.TaggedFields(h.tagged_fields);
    if (!tags.ok()) return tags.status();
    consumed += tags.position();
  }
  parsed.body = request.substr(consumed);
  return parsed;
}

void EncodeRequestHeader(const RequestHeader& header, std::string* out) {
  Encoder e(out, header.api_version, header.flexible());
  e.Int16(header.api_key);
  e.Int16(header.api_version);
  e.Int32(header.correlation_id);
  e.LegacyNullableString(header.client_id);
  e.TaggedFields(header.tagged_fields);
}

bool ResponseHeaderHasTaggedFields(ApiKey key, int16_t version) {
  return key != ApiKey::kApiVersions && IsFlexible(key, version);
}

void EncodeResponseHeader(int32_t correlation_id, ApiKey key, int16_t version,
                          std::string* out) {
  bool tagged = ResponseHeaderHasTaggedFields(key, version);
  Encoder e(out, version, tagged);
  e.Int32(correlation_id);
  e.TaggedFields(TaggedFields{});
}

absl::StatusOr<int32_t> ParseResponseHeader(ApiKey key, int16_t version,
                                            std::string_view* response) {
  bool tagged = ResponseHeaderHasTaggedFields(key, version);
  Decoder d(*response, version, tagged);
  int32_t correlation_id = 0;
  TaggedFields ignored;
  d.Int32(correlation_id);
  d.TaggedFields(ignored);
  if (!d.ok()) return d.status();
  response->remove_prefix(d.position());
  return correlation_id;
}

}  // namespace exactly::protocol
