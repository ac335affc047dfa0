#include "security/credentials.h"

#include <mutex>

#include "security/scram_crypto.h"

namespace exactly::broker {

std::string_view ScramMechanismName(ScramAlgorithm algorithm) {
  return algorithm == ScramAlgorithm::kSha256 ? "SCRAM-SHA-256"
                                              : "SCRAM-SHA-512";
}

std::optional<ScramAlgorithm> ParseScramMechanism(std::string_view mechanism) {
  if (mechanism == "SCRAM-SHA-256") return ScramAlgorithm::kSha256;
  if (mechanism == "SCRAM-SHA-512") return ScramAlgorithm::kSha512;
  return std::nullopt;
}

ScramCredential ScramCredentialFromSaltedPassword(
    ScramAlgorithm algorithm, std::string_view salted_password,
    std::string salt, int32_t iterations) {
  ScramCredential c;
  c.salt = std::move(salt);
  c.iterations = iterations;
  c.stored_key = scram::Hash(
      algorithm, scram::Hmac(algorithm, salted_password, "Client Key"));
  c.server_key = scram::Hmac(algorithm, salted_password, "Server Key");
  return c;
}

ScramCredential ScramCredentialFromPassword(ScramAlgorithm algorithm,
                                            std::string_view password,
                                            std::string salt,
                                            int32_t iterations) {
  std::string salted =
      scram::SaltPassword(algorithm, password, salt, iterations);
  return ScramCredentialFromSaltedPassword(algorithm, salted, std::move(salt),
                                           iterations);
}

std::shared_ptr<CredentialStore> CredentialStore::WithUsers(
    const std::map<std::string, std::string>& users) {
  auto store = std::make_shared<CredentialStore>();
  for (const auto& [user, password] : users) store->AddUser(user, password);
  return store;
}

void CredentialStore::AddUser(const std::string& user,
                              const std::string& password) {
  {
    std::unique_lock lock(mu_);
    passwords_[user] = password;
  }
  for (ScramAlgorithm a : {ScramAlgorithm::kSha256, ScramAlgorithm::kSha512}) {
    SetScram(user, a,
             ScramCredentialFromPassword(a, password, scram::RandomBytes(16),
                                         kMinScramIterations));
  }
}

bool CredentialStore::CheckPassword(std::string_view user,
                                    std::string_view password) const {
  std::shared_lock lock(mu_);
  auto it = passwords_.find(user);
  return it != passwords_.end() && scram::SameBytes(it->second, password);
}

std::optional<ScramCredential> CredentialStore::FindScram(
    std::string_view user, ScramAlgorithm algorithm) const {
  std::shared_lock lock(mu_);
  auto it = scram_.find({std::string(user), algorithm});
  if (it == scram_.end()) return std::nullopt;
  return it->second;
}

bool CredentialStore::HasScram(const std::string& user,
                               ScramAlgorithm algorithm) const {
  std::shared_lock lock(mu_);
  return scram_.count({user, algorithm}) > 0;
}

void CredentialStore::SetScram(const std::string& user,
                               ScramAlgorithm algorithm,
                               ScramCredential credential) {
  std::unique_lock lock(mu_);
  scram_[{user, algorithm}] = std::move(credential);
}

bool CredentialStore::DeleteScram(const std::string& user,
                                  ScramAlgorithm algorithm) {
  std::unique_lock lock(mu_);
  return scram_.erase({user, algorithm}) > 0;
}

std::map<std::string, std::vector<std::pair<ScramAlgorithm, int32_t>>>
CredentialStore::DescribeScram() const {
  std::shared_lock lock(mu_);
  std::map<std::string, std::vector<std::pair<ScramAlgorithm, int32_t>>> out;
  for (const auto& [key, credential] : scram_) {
    out[key.first].emplace_back(key.second, credential.iterations);
  }
  return out;
}

}  // namespace exactly::broker
