// SaslHandshake: the client names a mechanism; if this listener speaks SASL
// and the mechanism is enabled, the exchange starts (Kafka's
// SaslServerAuthenticator). The answer lists the enabled mechanisms either way.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "handlers/security_handlers.h"
#include "protocol/error_code.h"
#include "util/logging.h"

namespace exactly::broker {

void HandleSaslHandshake(BrokerState& b, const RequestHeader& h,
                         protocol::SaslHandshakeRequest& request, Responder r) {
  using protocol::ErrorCode;
  protocol::SaslHandshakeResponse response;
  std::shared_ptr<Connection> connection = r.connection();
  if (connection == nullptr) return;
  Session& session = connection->session();
  const std::vector<std::string>& enabled =
      b.options().security.sasl_mechanisms;
  if (session.authenticated()) {
    // A listener without SASL, or a client already authenticated: Kafka's
    // request handler answers ILLEGAL_SASL_STATE and keeps the connection.
    response.error_code = static_cast<int16_t>(ErrorCode::kIllegalSaslState);
    r.Send(response);
    return;
  }
  if (session.sasl() != nullptr) {
    // A second handshake in the middle of an exchange.
    response.error_code = static_cast<int16_t>(ErrorCode::kIllegalSaslState);
    r.Send(response);
    connection->CloseAfterResponses("a second SaslHandshake mid-exchange");
    return;
  }
  response.mechanisms = enabled;
  std::unique_ptr<SaslAuthenticator> authenticator;
  if (std::find(enabled.begin(), enabled.end(), request.mechanism) !=
      enabled.end()) {
    authenticator = NewSaslAuthenticator(request.mechanism, b.credentials());
  }
  if (authenticator == nullptr) {
    response.error_code =
        static_cast<int16_t>(ErrorCode::kUnsupportedSaslMechanism);
    r.Send(response);
    connection->CloseAfterResponses(
        absl::StrCat("unsupported SASL mechanism ", request.mechanism));
    return;
  }
  session.BeginSasl(std::move(authenticator), h.api_version == 0);
  r.Send(response);
}

}  // namespace exactly::broker
