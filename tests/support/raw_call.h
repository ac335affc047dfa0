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

// Sends `request` at `version` to the broker on `port` and decodes the
// answer; a test failure (and an empty Response) if there is none.
template <class Response, class Request>
Response Call(uint16_t port, int16_t version, const Request& request) {
  RawConnection c(port);
  protocol::RequestHeader h;
  h.api_key = static_cast<int16_t>(Request::kApiKey);
  h.api_version = version;
  h.correlation_id = 7;
  h.client_id = "raw-call";
  EXPECT_TRUE(c.Send(protocol::EncodeRequestFrame(h, request)));
  std::optional<std::string> frame = c.ReadFrame();
  EXPECT_TRUE(frame.has_value()) << "no response";
  if (!frame) return Response{};
  std::string_view body = *frame;
  EXPECT_TRUE(
      protocol::ParseResponseHeader(Request::kApiKey, version, &body).ok());
  absl::StatusOr<Response> response =
      protocol::DecodeMessage<Response>(body, version);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : Response{};
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_RAW_CALL_H_
