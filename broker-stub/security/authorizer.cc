#include "security/authorizer.h"

#include <algorithm>
#include <mutex>
#include <set>

namespace exactly::broker {

namespace {

bool EntryApplies(const AclBinding& acl, std::string_view principal,
                  std::string_view host) {
  return (acl.principal == principal || acl.principal == kWildcardPrincipal) &&
         (acl.host == kWildcardHost || acl.host == host);
}

// Whether an ALLOW of `granted` covers `wanted` (StandardAuthorizerData's
// IMPLIES_DESCRIBE and IMPLIES_DESCRIBE_CONFIGS).
bool Implies(AclOperation granted, AclOperation wanted) {
  switch (wanted) {
    case AclOperation::kDescribe:
      return granted == AclOperation::kDescribe ||
             granted == AclOperation::kRead ||
             granted == AclOperation::kWrite ||
             granted == AclOperation::kDelete ||
             granted == AclOperation::kAlter;
    case AclOperation::kDescribeConfigs:
      return granted == AclOperation::kDescribeConfigs ||
             granted == AclOperation::kAlterConfigs;
    default:
      return granted == wanted;
  }
}

// A name no ACL can carry literally, as Kafka's "hardcode": a decision on it
// is the one the wildcard and the defaults make.
constexpr std::string_view kProbeName =
    "\x01"
    "exactly-probe";

}  // namespace

Authorizer::Authorizer(AuthorizerOptions options)
    : options_(std::move(options)) {}

bool Authorizer::IsSuperUser(std::string_view principal) const {
  return std::find(options_.super_users.begin(), options_.super_users.end(),
                   principal) != options_.super_users.end();
}

bool Authorizer::Apply(const KeyView& key, std::string_view principal,
                       std::string_view host, AclOperation operation,
                       bool* any_acl, bool* allowed) const {
  // A Key, not the view: clang 14's libstdc++ tuples do not compare across
  // element types.
  auto it = acls_.find(
      Key{std::get<0>(key), std::get<1>(key), std::string(std::get<2>(key))});
  if (it == acls_.end()) return false;
  for (const AclBinding& acl : it->second) {
    *any_acl = true;
    if (!EntryApplies(acl, principal, host)) continue;
    if (acl.permission == AclPermission::kDeny) {
      if (acl.operation == AclOperation::kAll || acl.operation == operation)
        return true;
    } else if (acl.operation == AclOperation::kAll ||
               Implies(acl.operation, operation)) {
      *allowed = true;
    }
  }
  return false;
}

bool Authorizer::Authorize(std::string_view principal, std::string_view host,
                           AclOperation operation, AclResourceType type,
                           std::string_view name) const {
  if (IsSuperUser(principal)) return true;
  std::shared_lock lock(mu_);
  bool any_acl = false;
  bool allowed = false;
  if (Apply({type, AclPatternType::kLiteral, name}, principal, host, operation,
            &any_acl, &allowed) ||
      Apply({type, AclPatternType::kLiteral, kWildcardResource}, principal,
            host, operation, &any_acl, &allowed))
    return false;
  // Prefixed ACLs: one lookup per prefix of the name, the name included.
  for (size_t n = 1; n <= name.size(); ++n) {
    if (Apply({type, AclPatternType::kPrefixed, name.substr(0, n)}, principal,
              host, operation, &any_acl, &allowed))
      return false;
  }
  if (allowed) return true;
  return !any_acl && options_.allow_everyone_if_no_acl_found;
}

bool Authorizer::AuthorizeAny(std::string_view principal, std::string_view host,
                              AclOperation operation,
                              AclResourceType type) const {
  // Super users, a wildcard ALLOW and the no-ACL default, as Kafka checks
  // them: on a name nobody uses.
  if (Authorize(principal, host, operation, type, kProbeName)) return true;
  std::shared_lock lock(mu_);
  std::set<std::string, std::less<>> deny_literal, deny_prefixed;
  std::vector<const AclBinding*> allows;
  for (auto it = acls_.lower_bound(Key{type, AclPatternType::kUnknown, ""});
       it != acls_.end() && std::get<0>(it->first) == type; ++it) {
    for (const AclBinding& acl : it->second) {
      if (!EntryApplies(acl, principal, host) ||
          (acl.operation != operation && acl.operation != AclOperation::kAll))
        continue;
      if (acl.permission == AclPermission::kAllow) {
        allows.push_back(&acl);
      } else if (acl.pattern_type == AclPatternType::kLiteral) {
        deny_literal.insert(acl.resource_name);
      } else {
        deny_prefixed.insert(acl.resource_name);
      }
    }
  }
  if (deny_literal.contains(kWildcardResource)) return false;
  for (const AclBinding* allow : allows) {
    const std::string_view name = allow->resource_name;
    if (allow->pattern_type == AclPatternType::kLiteral &&
        (name == kWildcardResource || deny_literal.contains(name))) {
      if (name == kWildcardResource) return true;
      continue;
    }
    bool shadowed = false;
    for (size_t n = 1; n <= name.size() && !shadowed; ++n)
      shadowed = deny_prefixed.contains(name.substr(0, n));
    if (!shadowed) return true;
  }
  return false;
}

bool Authorizer::Add(const AclBinding& acl) {
  std::unique_lock lock(mu_);
  std::vector<AclBinding>& section =
      acls_[Key{acl.resource_type, acl.pattern_type, acl.resource_name}];
  if (std::find(section.begin(), section.end(), acl) != section.end())
    return false;
  section.push_back(acl);
  return true;
}

std::vector<AclBinding> Authorizer::Find(const AclBindingFilter& filter) const {
  std::shared_lock lock(mu_);
  std::vector<AclBinding> found;
  for (const auto& entry : acls_) {
    for (const AclBinding& acl : entry.second) {
      if (filter.Matches(acl)) found.push_back(acl);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<AclBinding> Authorizer::Remove(const AclBindingFilter& filter) {
  std::unique_lock lock(mu_);
  std::vector<AclBinding> removed;
  for (auto it = acls_.begin(); it != acls_.end();) {
    std::vector<AclBinding>& section = it->second;
    auto kept = std::stable_partition(
        section.begin(), section.end(),
        [&filter](const AclBinding& acl) { return !filter.Matches(acl); });
    removed.insert(removed.end(), kept, section.end());
    section.erase(kept, section.end());
    it = section.empty() ? acls_.erase(it) : std::next(it);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

std::shared_ptr<Authorizer> NewAuthorizer(const SecurityOptions& options) {
  return std::make_shared<Authorizer>(
      AuthorizerOptions{.super_users = options.super_users,
                        .allow_everyone_if_no_acl_found =
                            options.allow_everyone_if_no_acl_found});
}

}  // namespace exactly::broker
