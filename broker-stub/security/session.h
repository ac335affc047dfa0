// Who is on the other end of one connection: the listener it came in through
// and, once known, its principal. On a SASL listener nothing but ApiVersions
// and the SASL exchange is served until the exchange succeeds (Kafka's
// SaslServerAuthenticator states).
#ifndef EXACTLY_BROKER_SECURITY_SESSION_H_
#define EXACTLY_BROKER_SECURITY_SESSION_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "exactly/broker/security.h"
#include "security/sasl_authenticator.h"

namespace exactly::broker {

inline constexpr char kAnonymousPrincipal[] = "User:ANONYMOUS";

class Session {
 public:
  explicit Session(SecurityProtocol protocol)
      : protocol_(protocol), authenticated_(!UsesSasl(protocol)) {}

  SecurityProtocol protocol() const { return protocol_; }
  // The listener's name: the advertised endpoints a client is told are this
  // listener's (Metadata, FindCoordinator).
  std::string_view listener() const { return SecurityProtocolName(protocol_); }
  bool authenticated() const { return authenticated_; }
  // "User:<name>"; "User:ANONYMOUS" until someone authenticates.
  const std::string& principal() const { return principal_; }

  // A TLS client certificate names the principal on an SSL listener.
  void SetCertificatePrincipal(const std::string& subject) {
    if (!subject.empty()) principal_ = "User:" + subject;
  }

  // SaslHandshake chose a mechanism: its tokens follow, raw frames after
  // SaslHandshake v0, SaslAuthenticate requests after v1.
  void BeginSasl(std::unique_ptr<SaslAuthenticator> authenticator,
                 bool raw_tokens) {
    sasl_ = std::move(authenticator);
    raw_tokens_ = raw_tokens;
  }
  SaslAuthenticator* sasl() { return sasl_.get(); }
  bool expects_raw_token() const { return raw_tokens_ && !authenticated_; }
  // Whether a broker of this process opened the connection
  // (security/inter_broker.h); unknown until the authorizer first asks.
  std::optional<bool> inter_broker() const { return inter_broker_; }
  void set_inter_broker(bool inter_broker) { inter_broker_ = inter_broker; }

  void SaslSucceeded() {
    principal_ = "User:" + sasl_->user();
    authenticated_ = true;
    sasl_.reset();
  }

 private:
  SecurityProtocol protocol_;
  bool authenticated_;
  std::string principal_ = kAnonymousPrincipal;
  std::unique_ptr<SaslAuthenticator> sasl_;
  bool raw_tokens_ = false;
  std::optional<bool> inter_broker_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_SESSION_H_
