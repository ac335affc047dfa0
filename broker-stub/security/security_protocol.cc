#include <set>

#include "absl/strings/str_cat.h"
#include "security/credentials.h"
#include "security/validate.h"

namespace exactly::broker {

std::string_view SecurityProtocolName(SecurityProtocol protocol) {
  switch (protocol) {
    case SecurityProtocol::kPlaintext:
      return "PLAINTEXT";
    case SecurityProtocol::kSsl:
      return "SSL";
    case SecurityProtocol::kSaslPlaintext:
      return "SASL_PLAINTEXT";
    case SecurityProtocol::kSaslSsl:
      return "SASL_SSL";
  }
  return "PLAINTEXT";
}

std::optional<SecurityProtocol> ParseSecurityProtocol(std::string_view name) {
  for (SecurityProtocol p :
       {SecurityProtocol::kPlaintext, SecurityProtocol::kSsl,
        SecurityProtocol::kSaslPlaintext, SecurityProtocol::kSaslSsl}) {
    if (SecurityProtocolName(p) == name) return p;
  }
  return std::nullopt;
}

absl::Status ValidateSecurityOptions(const SecurityOptions& options) {
  std::set<SecurityProtocol> seen;
  for (const ListenerOptions& l : options.listeners) {
    if (l.protocol == SecurityProtocol::kPlaintext) {
      return absl::InvalidArgumentError(
          "security.listeners: the PLAINTEXT listener is BrokerOptions::port");
    }
    if (!seen.insert(l.protocol).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "security.listeners: two ",
          std::string(SecurityProtocolName(l.protocol)), " listeners"));
    }
  }
  for (const std::string& m : options.sasl_mechanisms) {
    if (m != "PLAIN" && !ParseScramMechanism(m)) {
      return absl::InvalidArgumentError(
          absl::StrCat("SASL mechanism ", m,
                       " is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"));
    }
  }
  return absl::OkStatus();
}

}  // namespace exactly::broker
