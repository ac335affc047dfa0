#include "security/acl.h"

#include "absl/strings/str_cat.h"

namespace exactly::broker {

AclResourceType ToResourceType(int8_t code) {
  return code >= 1 && code <= 7 ? static_cast<AclResourceType>(code)
                                : AclResourceType::kUnknown;
}

AclPatternType ToPatternType(int8_t code) {
  return code >= 1 && code <= 4 ? static_cast<AclPatternType>(code)
                                : AclPatternType::kUnknown;
}

AclOperation ToOperation(int8_t code) {
  return code >= 1 && code <= 14 ? static_cast<AclOperation>(code)
                                 : AclOperation::kUnknown;
}

AclPermission ToPermission(int8_t code) {
  return code >= 1 && code <= 3 ? static_cast<AclPermission>(code)
                                : AclPermission::kUnknown;
}

std::string_view Name(AclResourceType t) {
  switch (t) {
    case AclResourceType::kAny:
      return "ANY";
    case AclResourceType::kTopic:
      return "TOPIC";
    case AclResourceType::kGroup:
      return "GROUP";
    case AclResourceType::kCluster:
      return "CLUSTER";
    case AclResourceType::kTransactionalId:
      return "TRANSACTIONAL_ID";
    case AclResourceType::kDelegationToken:
      return "DELEGATION_TOKEN";
    case AclResourceType::kUser:
      return "USER";
    case AclResourceType::kUnknown:
      break;
  }
  return "UNKNOWN";
}

std::string_view Name(AclOperation o) {
  static constexpr std::string_view kNames[] = {"UNKNOWN",
                                                "ANY",
                                                "ALL",
                                                "READ",
                                                "WRITE",
                                                "CREATE",
                                                "DELETE",
                                                "ALTER",
                                                "DESCRIBE",
                                                "CLUSTER_ACTION",
                                                "DESCRIBE_CONFIGS",
                                                "ALTER_CONFIGS",
                                                "IDEMPOTENT_WRITE",
                                                "CREATE_TOKENS",
                                                "DESCRIBE_TOKENS"};
  return kNames[static_cast<int8_t>(ToOperation(static_cast<int8_t>(o)))];
}

absl::Status ValidateNewAcl(const AclBinding& acl) {
  if (acl.resource_type == AclResourceType::kUnknown ||
      acl.resource_type == AclResourceType::kAny)
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid resourceType ", std::string(Name(acl.resource_type))));
  if (acl.pattern_type != AclPatternType::kLiteral &&
      acl.pattern_type != AclPatternType::kPrefixed)
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid patternType ", static_cast<int>(acl.pattern_type)));
  if (acl.operation == AclOperation::kUnknown ||
      acl.operation == AclOperation::kAny)
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid operation ", std::string(Name(acl.operation))));
  if (acl.permission != AclPermission::kDeny &&
      acl.permission != AclPermission::kAllow)
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid permissionType ", static_cast<int>(acl.permission)));
  if (acl.resource_name.empty())
    return absl::InvalidArgumentError("Resource name should not be empty");
  if (acl.principal.find(':') == std::string::npos)
    return absl::InvalidArgumentError(absl::StrCat(
        "Could not parse principal from `", acl.principal,
        "` (no colon is present separating the principal type from the "
        "principal name)"));
  return absl::OkStatus();
}

bool AclBindingFilter::Matches(const AclBinding& acl) const {
  // The resource pattern.
  if (resource_type != AclResourceType::kAny &&
      resource_type != acl.resource_type)
    return false;
  if (pattern_type != AclPatternType::kAny &&
      pattern_type != AclPatternType::kMatch &&
      pattern_type != acl.pattern_type)
    return false;
  if (resource_name.has_value()) {
    const std::string& name = *resource_name;
    if (pattern_type == AclPatternType::kAny ||
        pattern_type == acl.pattern_type) {
      if (name != acl.resource_name) return false;
    } else if (acl.pattern_type == AclPatternType::kLiteral) {  // MATCH
      if (name != acl.resource_name && acl.resource_name != kWildcardResource)
        return false;
    } else if (!std::string_view(name).starts_with(acl.resource_name)) {
      return false;
    }
  }
  // The entry.
  if (principal.has_value() && *principal != acl.principal) return false;
  if (host.has_value() && *host != acl.host) return false;
  if (operation != AclOperation::kAny && operation != acl.operation)
    return false;
  return permission == AclPermission::kAny || permission == acl.permission;
}

bool AclBindingFilter::IsUnknown() const {
  return resource_type == AclResourceType::kUnknown ||
         pattern_type == AclPatternType::kUnknown ||
         operation == AclOperation::kUnknown ||
         permission == AclPermission::kUnknown;
}

}  // namespace exactly::broker
