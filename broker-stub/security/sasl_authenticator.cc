#include "security/sasl_authenticator.h"

#include <optional>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "security/scram_crypto.h"

namespace exactly::broker {

namespace {

using Step = SaslAuthenticator::Step;
using Outcome = SaslAuthenticator::Outcome;

Step Fail(std::string error) {
  return Step{Outcome::kFailed, "", std::move(error)};
}

// PLAIN: one token, "authzid NUL authcid NUL password".
class PlainAuthenticator : public SaslAuthenticator {
 public:
  explicit PlainAuthenticator(const CredentialStore& credentials)
      : credentials_(credentials) {}

  Step Evaluate(std::string_view client_token) override {
    absl::string_view token(client_token.data(), client_token.size());
    std::vector<absl::string_view> parts = absl::StrSplit(token, '\0');
    if (parts.size() != 3)
      return Fail("Invalid SASL/PLAIN response: expected 3 tokens");
    if (!parts[0].empty() && parts[0] != parts[1]) {
      return Fail(
          "Authentication failed: Client requested an authorization id that "
          "is different from username");
    }
    if (!credentials_.CheckPassword(std::string(parts[1]),
                                    std::string(parts[2])))
      return Fail("Authentication failed: Invalid username or password");
    user_ = std::string(parts[1]);
    return Step{Outcome::kSucceeded, "", ""};
  }

 private:
  const CredentialStore& credentials_;
};

// "a=1,b=2" -> the value of `key`, if present.
std::optional<absl::string_view> Attribute(absl::string_view message,
                                           char key) {
  for (absl::string_view part : absl::StrSplit(message, ',')) {
    if (part.size() >= 2 && part[0] == key && part[1] == '=')
      return part.substr(2);
  }
  return std::nullopt;
}

// SCRAM's saslname: "=2C" is ',' and "=3D" is '='; any other '=' is invalid.
std::optional<std::string> UnescapeSaslName(absl::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '=') {
      out.push_back(name[i]);
      continue;
    }
    absl::string_view code = name.substr(i + 1, 2);
    if (code == "2C") {
      out.push_back(',');
    } else if (code == "3D") {
      out.push_back('=');
    } else {
      return std::nullopt;
    }
    i += 2;
  }
  return out;
}

// SCRAM: client-first, server-first, client-final, server-final.
class ScramAuthenticator : public SaslAuthenticator {
 public:
  // An empty `server_nonce` is drawn at random for each exchange.
  ScramAuthenticator(ScramAlgorithm algorithm,
                     const CredentialStore& credentials,
                     std::string server_nonce)
      : algorithm_(algorithm),
        credentials_(credentials),
        server_nonce_(std::move(server_nonce)) {}

  Step Evaluate(std::string_view client_token) override {
    absl::string_view token(client_token.data(), client_token.size());
    return first_done_ ? ClientFinal(token) : ClientFirst(token);
  }

 private:
  std::string InvalidCredentials() const {
    return absl::StrCat(
        "Authentication failed during authentication due to invalid "
        "credentials with SASL mechanism ",
        std::string(ScramMechanismName(algorithm_)));
  }

  Step ClientFirst(absl::string_view message) {
    first_done_ = true;
    // gs2 header: channel binding flag ("n" or "y"; "p" asks for binding,
    // which Kafka does not support), authzid, then the bare message.
    std::vector<absl::string_view> parts =
        absl::StrSplit(message, absl::MaxSplits(',', 2));
    if (parts.size() != 3 || (parts[0] != "n" && parts[0] != "y"))
      return Fail("Invalid SCRAM client first message");
    gs2_header_ = absl::StrCat(parts[0], ",", parts[1], ",");
    client_first_bare_ = std::string(parts[2]);
    std::optional<absl::string_view> name = Attribute(client_first_bare_, 'n');
    std::optional<absl::string_view> nonce = Attribute(client_first_bare_, 'r');
    if (!name || !nonce || nonce->empty())
      return Fail("Invalid SCRAM client first message");
    std::optional<std::string> user = UnescapeSaslName(*name);
    if (!user) return Fail("Invalid SCRAM client first message");
    if (!parts[1].empty() && parts[1] != absl::StrCat("a=", *name)) {
      return Fail(
          "Authentication failed: Client requested an authorization id that "
          "is different from username");
    }
    // A copy: the store may change (AlterUserScramCredentials) mid-exchange.
    std::optional<ScramCredential> found =
        credentials_.FindScram(*user, algorithm_);
    if (!found) return Fail(InvalidCredentials());
    credential_ = *std::move(found);
    user_candidate_ = *std::move(user);
    if (server_nonce_.empty())
      server_nonce_ = absl::WebSafeBase64Escape(scram::RandomBytes(18));
    nonce_ = absl::StrCat(*nonce, server_nonce_);
    server_first_ =
        absl::StrCat("r=", nonce_, ",s=", absl::Base64Escape(credential_->salt),
                     ",i=", credential_->iterations);
    return Step{Outcome::kContinue, server_first_, ""};
  }

  Step ClientFinal(absl::string_view message) {
    if (!credential_ || finished_) return Fail("Unexpected SCRAM message");
    finished_ = true;
    size_t proof_at = message.rfind(",p=");
    if (proof_at == absl::string_view::npos)
      return Fail("Invalid SCRAM client final message");
    absl::string_view without_proof = message.substr(0, proof_at);
    std::string proof;
    if (!absl::Base64Unescape(message.substr(proof_at + 3), &proof))
      return Fail("Invalid SCRAM client final message");
    std::optional<absl::string_view> binding = Attribute(without_proof, 'c');
    std::optional<absl::string_view> nonce = Attribute(without_proof, 'r');
    std::string decoded_binding;
    if (!binding || !nonce ||
        !absl::Base64Unescape(*binding, &decoded_binding) ||
        decoded_binding != gs2_header_) {
      return Fail("Invalid SCRAM client final message");
    }
    // Kafka accepts a nonce that ends with the server's, because librdkafka
    // sends its own nonce again in front of it.
    if (!absl::EndsWith(*nonce, nonce_))
      return Fail("Invalid client nonce in the final client message.");
    const std::string auth_message = absl::StrCat(
        client_first_bare_, ",", server_first_, ",", without_proof);
    std::string signature =
        scram::Hmac(algorithm_, credential_->stored_key, auth_message);
    if (proof.size() != signature.size()) return Fail(InvalidCredentials());
    std::string client_key(signature.size(), '\0');
    for (size_t i = 0; i < signature.size(); ++i)
      client_key[i] = static_cast<char>(proof[i] ^ signature[i]);
    if (!scram::SameBytes(scram::Hash(algorithm_, client_key),
                          credential_->stored_key)) {
      return Fail(InvalidCredentials());
    }
    user_ = user_candidate_;
    return Step{Outcome::kSucceeded,
                absl::StrCat("v=", absl::Base64Escape(scram::Hmac(
                                       algorithm_, credential_->server_key,
                                       auth_message))),
                ""};
  }

  ScramAlgorithm algorithm_;
  const CredentialStore& credentials_;
  std::optional<ScramCredential> credential_;
  bool first_done_ = false;
  bool finished_ = false;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string server_nonce_;
  std::string nonce_;
  std::string user_candidate_;
};

}  // namespace

std::unique_ptr<SaslAuthenticator> NewSaslAuthenticator(
    std::string_view mechanism, const CredentialStore& credentials) {
  if (mechanism == "PLAIN")
    return std::make_unique<PlainAuthenticator>(credentials);
  if (std::optional<ScramAlgorithm> a = ParseScramMechanism(mechanism))
    return std::make_unique<ScramAuthenticator>(*a, credentials, "");
  return nullptr;
}

std::unique_ptr<SaslAuthenticator> NewScramAuthenticator(
    ScramAlgorithm algorithm, const CredentialStore& credentials,
    std::string server_nonce) {
  return std::make_unique<ScramAuthenticator>(algorithm, credentials,
                                              std::move(server_nonce));
}

}  // namespace exactly::broker
