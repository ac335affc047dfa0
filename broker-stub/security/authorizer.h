// Kafka's ACL authorizer (StandardAuthorizer): the ACLs of a broker, or of all
// the brokers of an in-process cluster, and the decision whether a principal
// may perform an operation on a resource. Thread-safe: a cluster's brokers
// share one from their own event-loop threads, so every broker enforces an
// ACL as soon as CreateAcls has answered (Kafka propagates ACLs through its
// metadata log; here they have one home).
#ifndef EXACTLY_BROKER_SECURITY_AUTHORIZER_H_
#define EXACTLY_BROKER_SECURITY_AUTHORIZER_H_

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "exactly/broker/security.h"
#include "security/acl.h"

namespace exactly::broker {

struct AuthorizerOptions {
  // Kafka's super.users: principals allowed everything ("User:admin").
  std::vector<std::string> super_users;
  // allow.everyone.if.no.acl.found: a resource no ACL names is open to all.
  bool allow_everyone_if_no_acl_found = false;
};

class Authorizer {
 public:
  explicit Authorizer(AuthorizerOptions options);

  bool IsSuperUser(std::string_view principal) const;

  // Kafka's rules: super users may do anything; otherwise the ACLs on the
  // resource (literal on its name, literal "*", prefixed on a prefix of its
  // name) whose principal is this one or "User:*" and whose host is this one
  // or "*" decide: a DENY of the operation (or of ALL) wins over everything,
  // then an ALLOW of it, of ALL, or of an operation that implies it (READ,
  // WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies
  // DESCRIBE_CONFIGS; denials imply nothing). With ACLs on the resource but
  // none allowing, the answer is no; with none at all, it is
  // allow_everyone_if_no_acl_found.
  bool Authorize(std::string_view principal, std::string_view host,
                 AclOperation operation, AclResourceType type,
                 std::string_view name) const;
  // Whether some resource of `type` allows `operation` (Kafka's
  // authorizeByResourceType, for idempotent producers that may write to
  // some topic): an ALLOW not shadowed by a DENY of "*", of the same literal
  // name, or of a prefix of it.
  bool AuthorizeAny(std::string_view principal, std::string_view host,
                    AclOperation operation, AclResourceType type) const;

  // CreateAcls: false when the ACL was there already (not an error).
  bool Add(const AclBinding& acl);
  // DescribeAcls and DeleteAcls: the ACLs the filter matches, sorted.
  std::vector<AclBinding> Find(const AclBindingFilter& filter) const;
  std::vector<AclBinding> Remove(const AclBindingFilter& filter);

 private:
  // Keyed by resource, so that a decision looks up a few sections.
  using Key = std::tuple<AclResourceType, AclPatternType, std::string>;
  using KeyView = std::tuple<AclResourceType, AclPatternType, std::string_view>;
  // Applies the ACLs on one resource pattern to the decision so far; true
  // when one denies (nothing can change the answer then).
  bool Apply(const KeyView& key, std::string_view principal,
             std::string_view host, AclOperation operation, bool* any_acl,
             bool* allowed) const;
  bool HasDeny(std::string_view principal, std::string_view host,
               AclOperation operation, AclResourceType type,
               AclPatternType pattern, std::string_view name) const;

  const AuthorizerOptions options_;
  mutable std::shared_mutex mu_;
  std::map<Key, std::vector<AclBinding>, std::less<>> acls_;
};

// The authorizer SecurityOptions asks for (super users, the no-ACL default).
std::shared_ptr<Authorizer> NewAuthorizer(const SecurityOptions& options);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_AUTHORIZER_H_
