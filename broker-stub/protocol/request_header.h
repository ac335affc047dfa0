// The request and response headers that frame every Kafka API call.
#ifndef EXACTLY_BROKER_PROTOCOL_REQUEST_HEADER_H_
#define EXACTLY_BROKER_PROTOCOL_REQUEST_HEADER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/api_key.h"
#include "protocol/serde.h"

namespace exactly::protocol {

// Every frame on the wire is an int32 size followed by that many bytes.
inline constexpr size_t kFrameSizePrefix = 4;

// Request header v1, or v2 (with tagged fields) when the API version is
// flexible. The client id is an int16-length string in both.
struct RequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  TaggedFields tagged_fields;

  ApiKey key() const { return static_cast<ApiKey>(api_key); }
  bool flexible() const { return IsFlexible(key(), api_version); }
};

// A decoded header and the body that follows it (a view into the same buffer).
struct ParsedRequest {
  RequestHeader header;
  std::string_view body;
};

// Splits a request (size prefix already removed) into header and body.
absl::StatusOr<ParsedRequest> ParseRequest(std::string_view request);

// Appends the header of `header`'s request.
void EncodeRequestHeader(const RequestHeader& header, std::string* out);

// Whether the response to (key, version) has header v1 (tagged fields).
// ApiVersions never does, so that a client can always read the error of a
// version it sent too high.
bool ResponseHeaderHasTaggedFields(ApiKey key, int16_t version);

// Appends a response header.
void EncodeResponseHeader(int32_t correlation_id, ApiKey key, int16_t version,
                          std::string* out);

// Reads a response header; returns the correlation id and advances *response
// past it.
absl::StatusOr<int32_t> ParseResponseHeader(ApiKey key, int16_t version,
                                            std::string_view* response);

// Builds a whole frame: size prefix, request header, encoded body.
template <class M>
std::string EncodeRequestFrame(const RequestHeader& header, const M& body) {
  std::string frame(kFrameSizePrefix, '\0');
  EncodeRequestHeader(header, &frame);
  Encoder encoder(&frame, header.api_version, header.flexible());
  const_cast<M&>(body).Serde(encoder);
  uint32_t size = static_cast<uint32_t>(frame.size() - kFrameSizePrefix);
  for (int i = 0; i < 4; ++i)
    frame[i] = static_cast<char>(size >> (24 - 8 * i));
  return frame;
}

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_REQUEST_HEADER_H_
