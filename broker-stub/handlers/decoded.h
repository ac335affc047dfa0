// The adapters between the dispatcher's untyped handler signature and the typed
// handler functions: decode the body as the API's request struct, then call the
// handler.
#ifndef EXACTLY_BROKER_HANDLERS_DECODED_H_
#define EXACTLY_BROKER_HANDLERS_DECODED_H_

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "cluster/broker_state.h"
#include "protocol/request_header.h"
#include "protocol/serde.h"
#include "server/responder.h"
#include "util/shared_buffer.h"

namespace exactly::broker {

// A body that does not decode closes the connection (the protocol has no way to
// answer a request it cannot read). Bytes after the body are ignored, as
// Kafka's broker ignores them (librdkafka < 2.1 sends one extra after
// ListGroups v3+).
template <class Request>
absl::StatusOr<Request> DecodeOrClose(const protocol::RequestHeader& h,
                                      std::string_view body, Responder& r) {
  absl::StatusOr<Request> request = protocol::DecodeMessage<Request>(
      body, h.api_version, /*allow_trailing=*/true);
  if (!request.ok()) {
    r.CloseConnection(absl::StrCat(
        "malformed ", std::string(protocol::ApiKeyName(h.api_key)), " v",
        h.api_version, " request: ", request.status().message()));
  }
  return request;
}

template <class Request,
          void (*Handle)(BrokerState&, const protocol::RequestHeader&, Request&,
                         Responder)>
void Decoded(BrokerState& b, const protocol::RequestHeader& h,
             std::string_view body, const SharedBuffer&, Responder r) {
  absl::StatusOr<Request> request = DecodeOrClose<Request>(h, body, r);
  if (request.ok()) Handle(b, h, *request, std::move(r));
}

// For handlers that keep bytes of the request itself (Produce keeps its
// batches).
template <class Request,
          void (*Handle)(BrokerState&, const protocol::RequestHeader&, Request&,
                         const SharedBuffer&, Responder)>
void DecodedWithFrame(BrokerState& b, const protocol::RequestHeader& h,
                      std::string_view body, const SharedBuffer& frame,
                      Responder r) {
  absl::StatusOr<Request> request = DecodeOrClose<Request>(h, body, r);
  if (request.ok()) Handle(b, h, *request, frame, std::move(r));
}

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_DECODED_H_
