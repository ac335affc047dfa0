// CreateAcls: adds ACLs to the authorizer, each checked as Kafka checks them
// (INVALID_REQUEST with the reason). Needs ALTER on the cluster; without the
// authorizer every creation is answered SECURITY_DISABLED, as Kafka does.
#include "absl/strings/str_cat.h"
#include "handlers/authorize.h"
#include "handlers/security_handlers.h"
#include "protocol/error_code.h"

namespace exactly::broker {

void HandleCreateAcls(BrokerState& b, const RequestHeader&,
                      protocol::CreateAclsRequest& request, Responder r) {
  using protocol::ErrorCode;
  protocol::CreateAclsResponse response;
  auto fail_all = [&](ErrorCode code, const char* message) {
    for (size_t i = 0; i < request.creations.size(); ++i)
      response.results.push_back(
          {static_cast<int16_t>(code), std::string(message), {}});
    r.Send(response);
  };
  Authorizer* authorizer = b.authorizer();
  if (authorizer == nullptr)
    return fail_all(ErrorCode::kSecurityDisabled,
                    "No Authorizer is configured.");
  if (!AllowedOnCluster(b, r, AclOperation::kAlter))
    return fail_all(ErrorCode::kClusterAuthorizationFailed,
                    "Cluster authorization failed.");
  for (const auto& c : request.creations) {
    AclBinding acl{ToResourceType(c.resource_type),
                   c.resource_name,
                   ToPatternType(c.resource_pattern_type),
                   c.principal,
                   c.host,
                   ToOperation(c.operation),
                   ToPermission(c.permission_type)};
    absl::Status valid = ValidateNewAcl(acl);
    if (valid.ok() && acl.resource_type == AclResourceType::kCluster &&
        acl.resource_name != kClusterResourceName) {
      valid = absl::InvalidArgumentError(
          absl::StrCat("The only valid name for the CLUSTER resource is ",
                       kClusterResourceName));
    }
    if (!valid.ok()) {
      response.results.push_back(
          {static_cast<int16_t>(ErrorCode::kInvalidRequest),
           std::string(valid.message()),
           {}});
      continue;
    }
    authorizer->Add(acl);  // an ACL that exists already is no error
    response.results.push_back({});
  }
  r.Send(response);
}

}  // namespace exactly::broker
