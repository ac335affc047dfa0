// SaslAuthenticate: one SASL token of the exchange SaslHandshake started. A
// failed exchange is answered SASL_AUTHENTICATION_FAILED with the reason, and
// the connection closes once that answer is written, as Kafka does.
#include "absl/strings/str_cat.h"
#include "handlers/security_handlers.h"
#include "protocol/error_code.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

// Feeds one token; the session is authenticated when the exchange succeeds.
SaslAuthenticator::Step Evaluate(Connection& connection,
                                 std::string_view token) {
  Session& session = connection.session();
  SaslAuthenticator::Step step = session.sasl()->Evaluate(token);
  if (step.outcome == SaslAuthenticator::Outcome::kSucceeded) {
    session.SaslSucceeded();
    LogDebug("connection from ", connection.peer(), " authenticated as ",
             session.principal());
  } else if (step.outcome == SaslAuthenticator::Outcome::kFailed) {
    LogInfo("SASL authentication failed for ", connection.peer(), ": ",
            step.error);
  }
  return step;
}

}  // namespace

void HandleSaslAuthenticate(BrokerState&, const RequestHeader&,
                            protocol::SaslAuthenticateRequest& request,
                            Responder r) {
  using protocol::ErrorCode;
  protocol::SaslAuthenticateResponse response;
  std::shared_ptr<Connection> connection = r.connection();
  if (connection == nullptr) return;
  Session& session = connection->session();
  if (session.sasl() == nullptr || session.expects_raw_token()) {
    response.error_code = static_cast<int16_t>(ErrorCode::kIllegalSaslState);
    response.error_message = "SaslAuthenticate without a SaslHandshake v1";
    r.Send(response);
    connection->CloseAfterResponses("SaslAuthenticate out of turn");
    return;
  }
  SaslAuthenticator::Step step = Evaluate(*connection, request.auth_bytes);
  if (step.outcome == SaslAuthenticator::Outcome::kFailed) {
    response.error_code =
        static_cast<int16_t>(ErrorCode::kSaslAuthenticationFailed);
    response.error_message = step.error;
    r.Send(response);
    connection->CloseAfterResponses("SASL authentication failed");
    return;
  }
  response.auth_bytes = std::move(step.token);
  r.Send(response);
}

void HandleRawSaslToken(BrokerState&,
                        const std::shared_ptr<Connection>& connection,
                        std::string_view token, uint64_t slot) {
  Responder r(connection, slot, protocol::RequestHeader{});
  SaslAuthenticator::Step step = Evaluate(*connection, token);
  if (step.outcome == SaslAuthenticator::Outcome::kFailed) {
    // Before SaslAuthenticate there was no way to say why: the connection
    // closes (Kafka's behaviour for v0 clients).
    r.CloseConnection(absl::StrCat("SASL authentication failed: ", step.error));
    return;
  }
  std::string frame(4, '\0');  // the size, filled in when it is written
  frame += step.token;
  r.SendFrame(std::move(frame));
}

}  // namespace exactly::broker
