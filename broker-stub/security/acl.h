// Kafka's ACL vocabulary, pure: resource types, pattern types, operations and
// permissions with their wire codes, an ACL (AclBinding) and the filters
// DescribeAcls and DeleteAcls match ACLs with (AclBindingFilter), after
// org.apache.kafka.common.acl and org.apache.kafka.common.resource.
#ifndef EXACTLY_BROKER_SECURITY_ACL_H_
#define EXACTLY_BROKER_SECURITY_ACL_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace exactly::broker {

// The codes are Kafka's; 0 stands for every code Kafka does not know
// (UNKNOWN), which no ACL and no valid filter may carry.
enum class AclResourceType : int8_t {
  kUnknown = 0,
  kAny = 1,
  kTopic = 2,
  kGroup = 3,
  kCluster = 4,
  kTransactionalId = 5,
  kDelegationToken = 6,
  kUser = 7,
};

enum class AclPatternType : int8_t {
  kUnknown = 0,
  kAny = 1,    // filters only: any pattern type, names compared as is
  kMatch = 2,  // filters only: the patterns that would apply to the name
  kLiteral = 3,
  kPrefixed = 4,
};

enum class AclOperation : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kAll = 2,
  kRead = 3,
  kWrite = 4,
  kCreate = 5,
  kDelete = 6,
  kAlter = 7,
  kDescribe = 8,
  kClusterAction = 9,
  kDescribeConfigs = 10,
  kAlterConfigs = 11,
  kIdempotentWrite = 12,
  kCreateTokens = 13,
  kDescribeTokens = 14,
};

enum class AclPermission : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kDeny = 2,
  kAllow = 3,
};

// From wire codes: a code Kafka does not define becomes kUnknown.
AclResourceType ToResourceType(int8_t code);
AclPatternType ToPatternType(int8_t code);
AclOperation ToOperation(int8_t code);
AclPermission ToPermission(int8_t code);

// Kafka's names ("TOPIC", "PREFIXED", "IDEMPOTENT_WRITE", "ALLOW"), for
// messages.
std::string_view Name(AclResourceType t);
std::string_view Name(AclOperation o);

// The name of the one CLUSTER resource, and the literal name and principal
// that match every name and every user.
inline constexpr char kClusterResourceName[] = "kafka-cluster";
inline constexpr char kWildcardResource[] = "*";
inline constexpr char kWildcardPrincipal[] = "User:*";
inline constexpr char kWildcardHost[] = "*";

struct AclBinding {
  AclResourceType resource_type = AclResourceType::kUnknown;
  std::string resource_name;
  AclPatternType pattern_type = AclPatternType::kLiteral;
  std::string principal;  // "User:alice"
  std::string host;       // an IP address, or "*"
  AclOperation operation = AclOperation::kUnknown;
  AclPermission permission = AclPermission::kUnknown;

  auto operator<=>(const AclBinding&) const = default;
};

// Kafka's checks on an ACL to create (AclControlManager.validateNewAcl):
// a concrete resource type, pattern type, operation and permission, a name,
// and a principal of the form TYPE:NAME. InvalidArgument says which.
absl::Status ValidateNewAcl(const AclBinding& acl);

// Null strings match anything; ANY matches any value.
struct AclBindingFilter {
  AclResourceType resource_type = AclResourceType::kAny;
  std::optional<std::string> resource_name;
  AclPatternType pattern_type = AclPatternType::kAny;
  std::optional<std::string> principal;
  std::optional<std::string> host;
  AclOperation operation = AclOperation::kAny;
  AclPermission permission = AclPermission::kAny;

  // ResourcePatternFilter.matches and AccessControlEntryFilter.matches: with
  // pattern type MATCH, a name matches the literal ACLs of that name or of
  // "*" and the prefixed ACLs whose prefix it starts with.
  bool Matches(const AclBinding& acl) const;
  // A field Kafka does not know: such a filter is refused (INVALID_REQUEST).
  bool IsUnknown() const;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_ACL_H_
