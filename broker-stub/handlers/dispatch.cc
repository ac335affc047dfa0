#include "handlers/dispatch.h"

#include "absl/strings/str_cat.h"
#include "handlers/api_table.h"
#include "handlers/security_handlers.h"
#include "protocol/messages/api_versions.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

// A client that sends ApiVersions at a version above ours gets
// UNSUPPORTED_VERSION in a v0 response that lists ApiVersions' own range
// only, as Kafka answers (KIP-511), so that it can retry at a version we speak.
void AnswerUnsupportedApiVersions(const protocol::RequestHeader& h,
                                  const ApiHandler& api, Responder& r) {
  protocol::ApiVersionsResponse response;
  response.error_code =
      static_cast<int16_t>(protocol::ErrorCode::kUnsupportedVersion);
  response.api_keys.push_back(
      {static_cast<int16_t>(api.key), api.min_version, api.max_version, {}});
  std::string frame(protocol::kFrameSizePrefix, '\0');
  protocol::EncodeResponseHeader(h.correlation_id,
                                 protocol::ApiKey::kApiVersions, 0, &frame);
  protocol::Encoder encoder(&frame, 0, false);
  response.Serde(encoder);
  r.SendFrame(std::move(frame));
}

// On a SASL listener, until the exchange succeeds.
bool IsAllowedBeforeAuthentication(protocol::ApiKey key) {
  return key == protocol::ApiKey::kApiVersions ||
         key == protocol::ApiKey::kSaslHandshake ||
         key == protocol::ApiKey::kSaslAuthenticate;
}

}  // namespace

void DispatchRequest(BrokerState& b,
                     const std::shared_ptr<Connection>& connection,
                     SharedBuffer frame, size_t size, uint64_t slot) {
  if (connection->session().expects_raw_token()) {
    HandleRawSaslToken(b, connection, std::string_view(frame.get(), size),
                       slot);
    return;
  }
  absl::StatusOr<protocol::ParsedRequest> parsed =
      protocol::ParseRequest(std::string_view(frame.get(), size));
  if (!parsed.ok()) {
    connection->Close(
        absl::StrCat("malformed request header: ", parsed.status().message()));
    return;
  }
  const protocol::RequestHeader& h = parsed->header;
  Responder r(connection, slot, h);
  r.set_delay_ms(b.faults().LatencyFor(h.api_key));
  const ApiHandler* api = FindApiHandler(h.api_key);
  if (api == nullptr) {
    r.CloseConnection(absl::StrCat("unsupported API key ", h.api_key, " (",
                                   std::string(protocol::ApiKeyName(h.api_key)),
                                   ")"));
    return;
  }
  if (!connection->session().authenticated() &&
      !IsAllowedBeforeAuthentication(api->key)) {
    // Kafka closes such a connection too: the client skipped the exchange.
    r.CloseConnection(absl::StrCat(
        std::string(protocol::ApiKeyName(h.api_key)),
        " before SASL authentication on a ",
        std::string(connection->session().listener()), " listener"));
    return;
  }
  b.counters().CountRequest(h.api_key);
  if (h.api_version < api->min_version || h.api_version > api->max_version) {
    if (api->key == protocol::ApiKey::kApiVersions) {
      AnswerUnsupportedApiVersions(h, *api, r);
      return;
    }
    r.CloseConnection(absl::StrCat(
        "unsupported ", std::string(protocol::ApiKeyName(h.api_key)),
        " version ", h.api_version, " (supported ", api->min_version, "-",
        api->max_version, ")"));
    return;
  }
  LogDebug("request ", std::string(protocol::ApiKeyName(h.api_key)), " v",
           h.api_version, " correlation ", h.correlation_id, " from ",
           connection->peer());
  api->handle(b, h, parsed->body, frame, std::move(r));
}

}  // namespace exactly::broker
