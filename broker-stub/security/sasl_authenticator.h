// The server side of one SASL exchange: PLAIN (RFC 4616) or SCRAM-SHA-256/512
// (RFC 5802, RFC 7677), fed the client's tokens one at a time, as Kafka's
// SaslServer is.
#ifndef EXACTLY_BROKER_SECURITY_SASL_AUTHENTICATOR_H_
#define EXACTLY_BROKER_SECURITY_SASL_AUTHENTICATOR_H_

#include <memory>
#include <string>
#include <string_view>

#include "security/credentials.h"

namespace exactly::broker {

class SaslAuthenticator {
 public:
  enum class Outcome { kContinue, kSucceeded, kFailed };
  struct Step {
    Outcome outcome = Outcome::kFailed;
    std::string token;  // for the client (kContinue, and SCRAM's final one)
    std::string error;  // why (kFailed), as Kafka words it
  };

  virtual ~SaslAuthenticator() = default;
  virtual Step Evaluate(std::string_view client_token) = 0;
  // The authenticated user's name, once Evaluate has succeeded.
  const std::string& user() const { return user_; }

 protected:
  std::string user_;
};

// Null for a mechanism this broker does not implement.
std::unique_ptr<SaslAuthenticator> NewSaslAuthenticator(
    std::string_view mechanism, const CredentialStore& credentials);
// SCRAM with a fixed server nonce instead of a random one: for tests that
// replay RFC 7677's exchange.
std::unique_ptr<SaslAuthenticator> NewScramAuthenticator(
    ScramAlgorithm algorithm, const CredentialStore& credentials,
    std::string server_nonce);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_SASL_AUTHENTICATOR_H_
