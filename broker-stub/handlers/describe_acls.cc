// DescribeAcls: the ACLs a filter matches, grouped by resource pattern. Needs
// DESCRIBE on the cluster; SECURITY_DISABLED without the authorizer.
#include "handlers/authorize.h"
#include "handlers/security_handlers.h"
#include "protocol/error_code.h"

namespace exactly::broker {

void HandleDescribeAcls(BrokerState& b, const RequestHeader&,
                        protocol::DescribeAclsRequest& request, Responder r) {
  using protocol::ErrorCode;
  protocol::DescribeAclsResponse response;
  Authorizer* authorizer = b.authorizer();
  AclBindingFilter filter{ToResourceType(request.resource_type_filter),
                          request.resource_name_filter,
                          ToPatternType(request.pattern_type_filter),
                          request.principal_filter,
                          request.host_filter,
                          ToOperation(request.operation),
                          ToPermission(request.permission_type)};
  if (authorizer == nullptr) {
    response.error_code = static_cast<int16_t>(ErrorCode::kSecurityDisabled);
    response.error_message = "No Authorizer is configured.";
  } else if (!AllowedOnCluster(b, r, AclOperation::kDescribe)) {
    response.error_code =
        static_cast<int16_t>(ErrorCode::kClusterAuthorizationFailed);
    response.error_message = "Cluster authorization failed.";
  } else if (filter.IsUnknown()) {
    response.error_code = static_cast<int16_t>(ErrorCode::kInvalidRequest);
    response.error_message = "Filter contain UNKNOWN elements";
  } else {
    // Sorted by resource pattern first, so that each resource is one run.
    for (const AclBinding& acl : authorizer->Find(filter)) {
      const int8_t type = static_cast<int8_t>(acl.resource_type);
      const int8_t pattern = static_cast<int8_t>(acl.pattern_type);
      if (response.resources.empty() ||
          response.resources.back().resource_type != type ||
          response.resources.back().resource_name != acl.resource_name ||
          response.resources.back().pattern_type != pattern) {
        response.resources.push_back(
            {type, acl.resource_name, pattern, {}, {}});
      }
      response.resources.back().acls.push_back(
          {acl.principal,
           acl.host,
           static_cast<int8_t>(acl.operation),
           static_cast<int8_t>(acl.permission),
           {}});
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
