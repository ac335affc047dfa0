// The broker's SASL mechanisms fed hostile tokens
// (security/sasl_authenticator): byte 0 picks PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512, then up to 4 tokens, each a length byte and that many bytes,
// go to one exchange in turn, as a client's SaslAuthenticate requests would.
// Oracles besides the sanitizers: an exchange only succeeds for the one user
// the store knows, and nothing is evaluated after it has finished.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "security/credentials.h"
#include "security/sasl_authenticator.h"

namespace {

const exactly::broker::CredentialStore& Store() {
  static const auto* store = [] {
    auto* s = new exactly::broker::CredentialStore();
    s->AddUser("alice", "alice-secret");
    return s;
  }();
  return *store;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using exactly::broker::SaslAuthenticator;
  if (size == 0) return 0;
  static constexpr std::string_view kMechanisms[] = {"PLAIN", "SCRAM-SHA-256",
                                                     "SCRAM-SHA-512"};
  std::unique_ptr<SaslAuthenticator> auth =
      exactly::broker::NewSaslAuthenticator(kMechanisms[data[0] % 3], Store());
  size_t pos = 1;
  for (int i = 0; i < 4 && pos < size; ++i) {
    const size_t wanted = data[pos];
    ++pos;
    const size_t n = std::min(wanted, size - pos);
    SaslAuthenticator::Step step = auth->Evaluate(
        std::string_view(reinterpret_cast<const char*>(data + pos), n));
    pos += n;
    if (step.outcome == SaslAuthenticator::Outcome::kSucceeded &&
        auth->user() != "alice") {
      std::abort();  // authenticated as someone the store does not know
    }
    if (step.outcome != SaslAuthenticator::Outcome::kContinue) break;
  }
  return 0;
}
