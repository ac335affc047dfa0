// Security for the bundled broker, off unless configured (Kafka's listeners,
// ssl.* and sasl.* settings): extra listeners speaking TLS, SASL or both, the
// users SASL accepts, and the ACL authorizer.
//
//   BrokerOptions options;
//   options.security.listeners = {{SecurityProtocol::kSaslSsl, 0}};
//   options.security.ssl_certificate_file = "broker.pem";
//   options.security.ssl_private_key_file = "broker.key";
//   options.security.sasl_users = {{"alice", "alice-secret"}};
//   ... broker->bootstrap_servers(SecurityProtocol::kSaslSsl) ...
//
// The broker's own port (BrokerOptions::port) stays a PLAINTEXT listener: it is
// the one brokers of a cluster use among themselves (Kafka's
// inter.broker.listener.name).
#ifndef EXACTLY_BROKER_SECURITY_H_
#define EXACTLY_BROKER_SECURITY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::broker {

// Kafka's security.protocol values; a listener is named after its protocol.
enum class SecurityProtocol { kPlaintext, kSsl, kSaslPlaintext, kSaslSsl };

// "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL".
std::string_view SecurityProtocolName(SecurityProtocol protocol);
std::optional<SecurityProtocol> ParseSecurityProtocol(std::string_view name);
inline bool UsesTls(SecurityProtocol p) {
  return p == SecurityProtocol::kSsl || p == SecurityProtocol::kSaslSsl;
}
inline bool UsesSasl(SecurityProtocol p) {
  return p == SecurityProtocol::kSaslPlaintext ||
         p == SecurityProtocol::kSaslSsl;
}

struct ListenerOptions {
  SecurityProtocol protocol = SecurityProtocol::kPlaintext;
  uint16_t port = 0;  // 0 picks a free one (Broker::port(protocol) tells)
};

struct SecurityOptions {
  // Listeners besides the PLAINTEXT one on BrokerOptions::port, at most one
  // per protocol.
  std::vector<ListenerOptions> listeners;
  // TLS (SSL and SASL_SSL listeners): the broker's certificate chain and
  // private key, PEM files.
  std::string ssl_certificate_file;
  std::string ssl_private_key_file;
  // When set, clients must present a certificate signed by one of these CAs
  // (Kafka's ssl.client.auth=required); their principal is then
  // "User:<subject DN>" on an SSL listener.
  std::string ssl_ca_file;
  // SASL users: name -> password. Each may log in with every enabled
  // mechanism; SCRAM credentials are derived from the password (4096
  // iterations, a random salt) and may be replaced or added through
  // AlterUserScramCredentials.
  std::map<std::string, std::string> sasl_users;
  // Kafka's sasl.enabled.mechanisms.
  std::vector<std::string> sasl_mechanisms = {"PLAIN", "SCRAM-SHA-256",
                                              "SCRAM-SHA-512"};
  // Kafka's ACL authorizer (authorizer.class.name set): every request is
  // checked against the ACLs that CreateAcls and DeleteAcls manage, with
  // Kafka's operations and errors. Off, nothing is checked and the ACL APIs
  // answer SECURITY_DISABLED. In a Cluster the brokers share their ACLs.
  // They live in memory: Broker::Restart keeps them, a new process starts
  // with none.
  bool authorizer = false;
  // super.users: principals allowed everything ("User:admin").
  std::vector<std::string> super_users;
  // allow.everyone.if.no.acl.found: a resource no ACL names is open to all.
  bool allow_everyone_if_no_acl_found = false;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_H_
