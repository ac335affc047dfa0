// DescribeUserScramCredentials: each user's SCRAM mechanisms and iteration
// counts, as Kafka's ScramImage describes them: no users (null or empty)
// means every user with a credential; a user named twice is answered once,
// DUPLICATE_RESOURCE; one without credentials RESOURCE_NOT_FOUND. Needs
// DESCRIBE on the cluster (a request-level CLUSTER_AUTHORIZATION_FAILED
// otherwise); served with the authorizer off too, as Kafka does. Error
// messages are "" when there is no error, as in Kafka's answers.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "handlers/authorize.h"
#include "handlers/security_handlers.h"
#include "protocol/error_code.h"

namespace exactly::broker {

void HandleDescribeUserScramCredentials(
    BrokerState& b, const RequestHeader&,
    protocol::DescribeUserScramCredentialsRequest& request, Responder r) {
  using protocol::ErrorCode;
  protocol::DescribeUserScramCredentialsResponse response;
  // Kafka's generated message defaults these nullable strings to "", and
  // its answers leave them so when there is no error.
  response.error_message = "";
  if (!AllowedOnCluster(b, r, AclOperation::kDescribe)) {
    response.error_code =
        static_cast<int16_t>(ErrorCode::kClusterAuthorizationFailed);
    response.error_message = "Cluster authorization failed.";
    r.Send(response);
    return;
  }
  const std::map<std::string, std::vector<std::pair<ScramAlgorithm, int32_t>>>
      all = b.credentials().DescribeScram();
  // Each user once, in the order first named, and whether named again.
  std::vector<std::pair<std::string, bool>> users;
  if (!request.users || request.users->empty()) {
    for (const auto& [user, credentials] : all) users.push_back({user, false});
  } else {
    std::map<std::string, size_t> seen;
    for (const auto& u : *request.users) {
      auto [it, fresh] = seen.try_emplace(u.name, users.size());
      if (fresh) {
        users.push_back({u.name, false});
      } else {
        users[it->second].second = true;
      }
    }
  }
  for (const auto& [user, duplicate] : users) {
    auto& result = response.results.emplace_back();
    result.user = user;
    result.error_message = "";
    if (duplicate) {
      result.error_code = static_cast<int16_t>(ErrorCode::kDuplicateResource);
      result.error_message = absl::StrCat(
          "Cannot describe SCRAM credentials for the same user twice in a "
          "single request: ",
          user);
      continue;
    }
    auto found = all.find(user);
    if (found == all.end()) {
      result.error_code = static_cast<int16_t>(ErrorCode::kResourceNotFound);
      result.error_message = absl::StrCat(
          "Attempt to describe a user credential that does not exist: ", user);
      continue;
    }
    for (const auto& [algorithm, iterations] : found->second)
      result.credential_infos.push_back(
          {static_cast<int8_t>(algorithm), iterations, {}});
  }
  r.Send(response);
}

}  // namespace exactly::broker
