// AlterUserScramCredentials: deletes and sets SCRAM credentials with the
// checks of Kafka's controller (ScramControlManager): an empty user name or
// iterations outside [4096, 16384] are UNACCEPTABLE_CREDENTIAL, a mechanism
// other than 1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512) is
// UNSUPPORTED_SASL_MECHANISM, deleting a credential that does not exist is
// RESOURCE_NOT_FOUND, and a user altered twice in one request (across
// deletions and upsertions) is DUPLICATE_RESOURCE, with none of that user's
// alterations applied. The rest apply at once: the next SASL authentication,
// on any broker of the cluster, checks the new credentials. An upsertion
// carries the salted password; the stored and server keys come from it
// (RFC 5802). Needs ALTER on the cluster: each user is answered
// CLUSTER_AUTHORIZATION_FAILED otherwise.
#include <map>
#include <optional>
#include <set>
#include <string>

#include "handlers/authorize.h"
#include "handlers/security_handlers.h"
#include "protocol/error_code.h"

namespace exactly::broker {

namespace {

using protocol::AlterUserScramCredentialsRequest;
using protocol::ErrorCode;

constexpr const char* kMissing =
    "Attempt to delete a user credential that does not exist";

struct Refusal {
  ErrorCode code;
  const char* message;
};

std::optional<ScramAlgorithm> AlgorithmOf(int8_t mechanism) {
  if (mechanism == static_cast<int8_t>(ScramAlgorithm::kSha256))
    return ScramAlgorithm::kSha256;
  if (mechanism == static_cast<int8_t>(ScramAlgorithm::kSha512))
    return ScramAlgorithm::kSha512;
  return std::nullopt;
}

std::optional<Refusal> CheckNameAndMechanism(const std::string& name,
                                             int8_t mechanism) {
  if (name.empty())
    return Refusal{ErrorCode::kUnacceptableCredential,
                   "Username must not be empty"};
  if (!AlgorithmOf(mechanism))
    return Refusal{ErrorCode::kUnsupportedSaslMechanism,
                   "Unknown SCRAM mechanism"};
  return std::nullopt;
}

std::optional<Refusal> CheckDeletion(
    const CredentialStore& store,
    const AlterUserScramCredentialsRequest::Deletion& d) {
  if (auto refused = CheckNameAndMechanism(d.name, d.mechanism)) return refused;
  if (!store.HasScram(d.name, *AlgorithmOf(d.mechanism)))
    return Refusal{ErrorCode::kResourceNotFound, kMissing};
  return std::nullopt;
}

std::optional<Refusal> CheckUpsertion(
    const AlterUserScramCredentialsRequest::Upsertion& u) {
  if (auto refused = CheckNameAndMechanism(u.name, u.mechanism)) return refused;
  if (u.iterations < kMinScramIterations)
    return Refusal{ErrorCode::kUnacceptableCredential, "Too few iterations"};
  if (u.iterations > kMaxScramIterations)
    return Refusal{ErrorCode::kUnacceptableCredential, "Too many iterations"};
  return std::nullopt;
}

constexpr const char* kTwice =
    "A user credential cannot be altered twice in the same request";

}  // namespace

void HandleAlterUserScramCredentials(BrokerState& b, const RequestHeader&,
                                     AlterUserScramCredentialsRequest& request,
                                     Responder r) {
  protocol::AlterUserScramCredentialsResponse response;
  auto answer = [&](const std::string& user, ErrorCode code,
                    std::optional<std::string> message) {
    response.results.push_back(
        {user, static_cast<int16_t>(code), std::move(message), {}});
  };
  if (!AllowedOnCluster(b, r, AclOperation::kAlter)) {
    std::set<std::string> users;
    for (const auto& d : request.deletions) users.insert(d.name);
    for (const auto& u : request.upsertions) users.insert(u.name);
    for (const std::string& user : users)
      answer(user, ErrorCode::kClusterAuthorizationFailed,
             "Cluster authorization failed.");
    r.Send(response);
    return;
  }
  CredentialStore& store = b.credentials();
  // Kafka's bookkeeping: a user's first alteration is kept until a second
  // one turns it into DUPLICATE_RESOURCE; a user refused once stays refused.
  std::map<std::string, const AlterUserScramCredentialsRequest::Deletion*>
      deletions;
  std::map<std::string, const AlterUserScramCredentialsRequest::Upsertion*>
      upsertions;
  std::map<std::string, Refusal> refused;
  for (const auto& d : request.deletions) {
    if (refused.count(d.name)) continue;
    if (deletions.erase(d.name) > 0) {
      refused.emplace(d.name, Refusal{ErrorCode::kDuplicateResource, kTwice});
    } else if (auto refusal = CheckDeletion(store, d)) {
      refused.emplace(d.name, *refusal);
    } else {
      deletions.emplace(d.name, &d);
    }
  }
  for (const auto& u : request.upsertions) {
    if (refused.count(u.name)) continue;
    if (deletions.erase(u.name) + upsertions.erase(u.name) > 0) {
      refused.emplace(u.name, Refusal{ErrorCode::kDuplicateResource, kTwice});
    } else if (auto refusal = CheckUpsertion(u)) {
      refused.emplace(u.name, *refusal);
    } else {
      upsertions.emplace(u.name, &u);
    }
  }
  for (const auto& [user, d] : deletions) {
    // Another broker of the cluster may have deleted it since the check.
    if (!store.DeleteScram(user, *AlgorithmOf(d->mechanism))) {
      answer(user, ErrorCode::kResourceNotFound, kMissing);
      continue;
    }
    answer(user, ErrorCode::kNone, std::nullopt);
  }
  for (const auto& [user, u] : upsertions) {
    const ScramAlgorithm algorithm = *AlgorithmOf(u->mechanism);
    store.SetScram(user, algorithm,
                   ScramCredentialFromSaltedPassword(
                       algorithm, u->salted_password, u->salt, u->iterations));
    answer(user, ErrorCode::kNone, std::nullopt);
  }
  for (const auto& [user, refusal] : refused)
    answer(user, refusal.code, std::string(refusal.message));
  r.Send(response);
}

}  // namespace exactly::broker
