#include "main/security_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

ABSL_FLAG(std::string, listeners, "",
          "Listeners besides the PLAINTEXT one on --port, Kafka-style: "
          "PROTOCOL://:PORT, comma-separated; PROTOCOL is SSL, "
          "SASL_PLAINTEXT or SASL_SSL; port 0 picks a free one (each is "
          "printed as listener.PROTOCOL=HOST:PORT).");
ABSL_FLAG(std::string, ssl_certificate_file, "",
          "PEM file with the broker's certificate chain (SSL, SASL_SSL).");
ABSL_FLAG(std::string, ssl_private_key_file, "",
          "PEM file with the broker's private key.");
ABSL_FLAG(std::string, ssl_ca_file, "",
          "PEM file of CAs: when set, TLS clients must present a certificate "
          "signed by one (ssl.client.auth=required).");
ABSL_FLAG(std::string, sasl_users, "",
          "SASL users, USER:PASSWORD comma-separated; each may log in with "
          "every enabled mechanism.");
ABSL_FLAG(std::string, sasl_mechanisms, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
          "Enabled SASL mechanisms (sasl.enabled.mechanisms).");
ABSL_FLAG(bool, authorizer, false,
          "Check every request against ACLs (Kafka's authorizer.class.name); "
          "CreateAcls, DescribeAcls and DeleteAcls manage them.");
ABSL_FLAG(std::string, super_users, "",
          "With --authorizer: principals allowed everything, comma-separated "
          "(User:admin).");
ABSL_FLAG(bool, allow_everyone_if_no_acl_found, false,
          "With --authorizer: a resource no ACL names is open to all.");

namespace exactly::broker {

absl::Status ApplySecurityFlags(SecurityOptions& security) {
  for (absl::string_view spec :
       absl::StrSplit(absl::GetFlag(FLAGS_listeners), ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> parts =
        absl::StrSplit(spec, absl::MaxSplits("://", 1));
    size_t colon = parts.size() == 2 ? parts[1].rfind(':') : std::string::npos;
    std::optional<SecurityProtocol> protocol =
        parts.size() == 2 ? ParseSecurityProtocol(std::string_view(
                                parts[0].data(), parts[0].size()))
                          : std::nullopt;
    uint32_t port = 0;
    if (!protocol || colon == std::string::npos ||
        !absl::SimpleAtoi(parts[1].substr(colon + 1), &port) || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--listeners: '", spec,
          "' is not PROTOCOL://:PORT (PROTOCOL one of SSL, SASL_PLAINTEXT, "
          "SASL_SSL)"));
    }
    if (*protocol == SecurityProtocol::kPlaintext) {
      return absl::InvalidArgumentError(
          "--listeners: the PLAINTEXT listener is --port");
    }
    security.listeners.push_back({*protocol, static_cast<uint16_t>(port)});
  }
  security.ssl_certificate_file = absl::GetFlag(FLAGS_ssl_certificate_file);
  security.ssl_private_key_file = absl::GetFlag(FLAGS_ssl_private_key_file);
  security.ssl_ca_file = absl::GetFlag(FLAGS_ssl_ca_file);
  for (absl::string_view user : absl::StrSplit(absl::GetFlag(FLAGS_sasl_users),
                                               ',', absl::SkipEmpty())) {
    std::vector<std::string> parts =
        absl::StrSplit(user, absl::MaxSplits(':', 1));
    if (parts.size() != 2 || parts[0].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sasl-users: '", user, "' is not USER:PASSWORD"));
    }
    security.sasl_users[parts[0]] = parts[1];
  }
  security.sasl_mechanisms = absl::StrSplit(
      absl::GetFlag(FLAGS_sasl_mechanisms), ',', absl::SkipEmpty());
  security.authorizer = absl::GetFlag(FLAGS_authorizer);
  security.super_users =
      absl::StrSplit(absl::GetFlag(FLAGS_super_users), ',', absl::SkipEmpty());
  security.allow_everyone_if_no_acl_found =
      absl::GetFlag(FLAGS_allow_everyone_if_no_acl_found);
  return absl::OkStatus();
}

}  // namespace exactly::broker
