// The users SASL accepts: a password for PLAIN, and SCRAM credentials (salt,
// iterations, stored and server keys: never the password) per SCRAM mechanism,
// as Kafka keeps them (KIP-84, KIP-554).
#ifndef EXACTLY_BROKER_SECURITY_CREDENTIALS_H_
#define EXACTLY_BROKER_SECURITY_CREDENTIALS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exactly::broker {

enum class ScramAlgorithm { kSha256 = 1, kSha512 = 2 };  // Kafka's type ids

// "SCRAM-SHA-256" / "SCRAM-SHA-512".
std::string_view ScramMechanismName(ScramAlgorithm algorithm);
std::optional<ScramAlgorithm> ParseScramMechanism(std::string_view mechanism);

struct ScramCredential {
  std::string salt;
  int32_t iterations = 0;
  std::string stored_key;  // H(HMAC(salted password, "Client Key"))
  std::string server_key;  // HMAC(salted password, "Server Key")
};

// Kafka's minimum and maximum iteration counts for SCRAM credentials.
inline constexpr int32_t kMinScramIterations = 4096;
inline constexpr int32_t kMaxScramIterations = 16384;

// The credential a password gives with `salt` and `iterations` (RFC 5802).
ScramCredential ScramCredentialFromPassword(ScramAlgorithm algorithm,
                                            std::string_view password,
                                            std::string salt,
                                            int32_t iterations);
// The same from an already salted password (what AlterUserScramCredentials
// carries: the client salts, the broker never sees the password).
ScramCredential ScramCredentialFromSaltedPassword(
    ScramAlgorithm algorithm, std::string_view salted_password,
    std::string salt, int32_t iterations);

// Thread-safe: the brokers of a cluster share one from their own event-loop
// threads, so a credential AlterUserScramCredentials (or the admin port) sets
// is the one the next authentication on any broker checks.
class CredentialStore {
 public:
  // A store holding `users` (user -> password), each as AddUser adds one.
  static std::shared_ptr<CredentialStore> WithUsers(
      const std::map<std::string, std::string>& users);

  // A user who may log in with `password`: PLAIN, and both SCRAM mechanisms
  // with a fresh random salt.
  void AddUser(const std::string& user, const std::string& password);
  bool CheckPassword(std::string_view user, std::string_view password) const;

  // A copy: the credential may change while an exchange uses it.
  std::optional<ScramCredential> FindScram(std::string_view user,
                                           ScramAlgorithm algorithm) const;
  bool HasScram(const std::string& user, ScramAlgorithm algorithm) const;
  void SetScram(const std::string& user, ScramAlgorithm algorithm,
                ScramCredential credential);
  // False when the user had no credential of that mechanism.
  bool DeleteScram(const std::string& user, ScramAlgorithm algorithm);
  // Each user with SCRAM credentials, and (mechanism, iterations) of each.
  std::map<std::string, std::vector<std::pair<ScramAlgorithm, int32_t>>>
  DescribeScram() const;

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::string, std::less<>> passwords_;
  std::map<std::pair<std::string, ScramAlgorithm>, ScramCredential> scram_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_CREDENTIALS_H_
