// One request to a bundled broker on a fresh connection, its answer decoded:
// for tests that speak the protocol themselves (a non-leader's error, a field
// a client library hides).
#ifndef EXACTLY_TESTS_SUPPORT_RAW_CALL_H_
#define EXACTLY_TESTS_SUPPORT_RAW_CALL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"
#include "support/raw_connection.h"

namespace exactly::testing {

// One request on `c` and its decoded answer: nullopt when the broker closed
// the connection instead, or answered with something that does not decode.
template <class Response, class Request>
std::optional<Response> Exchange(RawConnection& c, int16_t version,
                                 const Request& request) {
  protocol::RequestHeader h;
  h.api_key = static_cast<int16_t>(Request::kApiKey);
  h.api_version = version;
  h.correlation_id = 7;
  h.client_id = "raw-call";
  if (!c.Send(protocol::EncodeRequestFrame(h, request))) return std::nullopt;
  std::optional<std::string> frame = c.ReadFrame();
  if (!frame) return std::nullopt;
  std::string_view body = *frame;
  if (!protocol::ParseResponseHeader(Request::kApiKey, version, &body).ok()) {
    return std::nullopt;
  }
  absl::StatusOr<Response> response =
      protocol::DecodeMessage<Response>(body, version);
  if (!response.ok()) return std::nullopt;
  return *std::move(response);
}

// Sends `request` at `version` to the broker on `port` on a fresh connection
// and decodes the answer; a test failure (and an empty Response) if there is
// none.
template <class Response, class Request>
Response Call(uint16_t port, int16_t version, const Request& request) {
  RawConnection c(port);
  std::optional<Response> response = Exchange<Response>(c, version, request);
  EXPECT_TRUE(response.has_value()) << "no answer, or one that does not decode";
  return response ? *std::move(response) : Response{};
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_RAW_CALL_H_
