// DeleteAcls: removes the ACLs each filter matches and names them. Needs
// ALTER on the cluster; SECURITY_DISABLED without the authorizer.
#include "handlers/authorize.h"
#include "handlers/security_handlers.h"
#include "protocol/error_code.h"

namespace exactly::broker {

void HandleDeleteAcls(BrokerState& b, const RequestHeader&,
                      protocol::DeleteAclsRequest& request, Responder r) {
  using protocol::ErrorCode;
  protocol::DeleteAclsResponse response;
  Authorizer* authorizer = b.authorizer();
  const bool allowed =
      authorizer != nullptr && AllowedOnCluster(b, r, AclOperation::kAlter);
  for (const auto& f : request.filters) {
    auto& result = response.filter_results.emplace_back();
    if (authorizer == nullptr) {
      result.error_code = static_cast<int16_t>(ErrorCode::kSecurityDisabled);
      result.error_message = "No Authorizer is configured.";
      continue;
    }
    if (!allowed) {
      result.error_code =
          static_cast<int16_t>(ErrorCode::kClusterAuthorizationFailed);
      result.error_message = "Cluster authorization failed.";
      continue;
    }
    AclBindingFilter filter{ToResourceType(f.resource_type_filter),
                            f.resource_name_filter,
                            ToPatternType(f.pattern_type_filter),
                            f.principal_filter,
                            f.host_filter,
                            ToOperation(f.operation),
                            ToPermission(f.permission_type)};
    if (filter.IsUnknown()) {
      result.error_code = static_cast<int16_t>(ErrorCode::kInvalidRequest);
      result.error_message = "Filter contain UNKNOWN elements";
      continue;
    }
    for (const AclBinding& acl : authorizer->Remove(filter)) {
      auto& m = result.matching_acls.emplace_back();
      m.resource_type = static_cast<int8_t>(acl.resource_type);
      m.resource_name = acl.resource_name;
      m.pattern_type = static_cast<int8_t>(acl.pattern_type);
      m.principal = acl.principal;
      m.host = acl.host;
      m.operation = static_cast<int8_t>(acl.operation);
      m.permission_type = static_cast<int8_t>(acl.permission);
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
