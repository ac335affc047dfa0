// The ACL authorizer's rules, against Kafka's (StandardAuthorizerData,
// ResourcePatternFilter, AccessControlEntryFilter): filters, wildcards,
// prefixes, DENY over ALLOW, implied operations, super users, the no-ACL
// default and authorizeByResourceType.
#include "security/authorizer.h"

#include <gtest/gtest.h>

#include "security/acl.h"

namespace exactly::broker {
namespace {

using O = AclOperation;
using R = AclResourceType;

AclBinding Acl(R type, std::string name, AclPatternType pattern,
               std::string principal, O op,
               AclPermission permission = AclPermission::kAllow,
               std::string host = "*") {
  return {type, std::move(name), pattern, std::move(principal), std::move(host),
          op,   permission};
}

AclBinding Literal(R type, std::string name, std::string principal, O op,
                   AclPermission permission = AclPermission::kAllow) {
  return Acl(type, std::move(name), AclPatternType::kLiteral,
             std::move(principal), op, permission);
}

constexpr char kHost[] = "127.0.0.1";

TEST(AclTest, CodesOutsideKafkasAreUnknown) {
  EXPECT_EQ(ToResourceType(2), R::kTopic);
  EXPECT_EQ(ToResourceType(8), R::kUnknown);
  EXPECT_EQ(ToResourceType(-1), R::kUnknown);
  EXPECT_EQ(ToPatternType(4), AclPatternType::kPrefixed);
  EXPECT_EQ(ToPatternType(5), AclPatternType::kUnknown);
  EXPECT_EQ(ToOperation(12), O::kIdempotentWrite);
  EXPECT_EQ(ToOperation(15), O::kUnknown);
  EXPECT_EQ(ToPermission(3), AclPermission::kAllow);
  EXPECT_EQ(ToPermission(0), AclPermission::kUnknown);
  EXPECT_EQ(Name(O::kIdempotentWrite), "IDEMPOTENT_WRITE");
  EXPECT_EQ(Name(R::kTransactionalId), "TRANSACTIONAL_ID");
}

TEST(AclTest, ValidateNewAclAsKafka) {
  AclBinding ok = Literal(R::kTopic, "t", "User:alice", O::kRead);
  EXPECT_TRUE(ValidateNewAcl(ok).ok());
  AclBinding bad = ok;
  bad.resource_type = R::kAny;
  EXPECT_FALSE(ValidateNewAcl(bad).ok());
  bad = ok;
  bad.pattern_type = AclPatternType::kMatch;
  EXPECT_FALSE(ValidateNewAcl(bad).ok());
  bad = ok;
  bad.operation = O::kAny;
  EXPECT_FALSE(ValidateNewAcl(bad).ok());
  bad = ok;
  bad.permission = AclPermission::kAny;
  EXPECT_FALSE(ValidateNewAcl(bad).ok());
  bad = ok;
  bad.resource_name = "";
  EXPECT_FALSE(ValidateNewAcl(bad).ok());
  bad = ok;
  bad.principal = "alice";
  EXPECT_FALSE(ValidateNewAcl(bad).ok());
}

TEST(AclTest, FilterMatchesPatternsAsKafka) {
  AclBinding literal = Literal(R::kTopic, "orders", "User:alice", O::kRead);
  AclBinding wildcard = Literal(R::kTopic, "*", "User:alice", O::kRead);
  AclBinding prefixed =
      Acl(R::kTopic, "ord", AclPatternType::kPrefixed, "User:alice", O::kRead);
  AclBindingFilter any;  // everything ANY or null
  EXPECT_TRUE(any.Matches(literal));
  EXPECT_TRUE(any.Matches(prefixed));

  // ANY with a name: names compared as they are, whatever the pattern type.
  AclBindingFilter by_name{.resource_name = "orders"};
  EXPECT_TRUE(by_name.Matches(literal));
  EXPECT_FALSE(by_name.Matches(wildcard));
  EXPECT_FALSE(by_name.Matches(prefixed));

  // MATCH: what would apply to the name.
  AclBindingFilter match{.resource_name = "orders",
                         .pattern_type = AclPatternType::kMatch};
  EXPECT_TRUE(match.Matches(literal));
  EXPECT_TRUE(match.Matches(wildcard));
  EXPECT_TRUE(match.Matches(prefixed));
  match.resource_name = "payments";
  EXPECT_FALSE(match.Matches(literal));
  EXPECT_TRUE(match.Matches(wildcard));
  EXPECT_FALSE(match.Matches(prefixed));

  // A concrete pattern type: that type only, the name as is.
  AclBindingFilter only_prefixed{.resource_name = "ord",
                                 .pattern_type = AclPatternType::kPrefixed};
  EXPECT_TRUE(only_prefixed.Matches(prefixed));
  EXPECT_FALSE(only_prefixed.Matches(literal));
  only_prefixed.resource_name = "orders";
  EXPECT_FALSE(only_prefixed.Matches(prefixed));

  // The entry: principal, host, operation and permission.
  AclBindingFilter entry{.principal = "User:bob"};
  EXPECT_FALSE(entry.Matches(literal));
  entry = {.operation = O::kWrite};
  EXPECT_FALSE(entry.Matches(literal));
  entry = {.permission = AclPermission::kDeny};
  EXPECT_FALSE(entry.Matches(literal));
  entry = {.resource_type = R::kGroup};
  EXPECT_FALSE(entry.Matches(literal));
  entry = {
      .host = "*", .operation = O::kRead, .permission = AclPermission::kAllow};
  EXPECT_TRUE(entry.Matches(literal));

  EXPECT_FALSE(AclBindingFilter{}.IsUnknown());
  EXPECT_TRUE(AclBindingFilter{.resource_type = R::kUnknown}.IsUnknown());
  EXPECT_TRUE(AclBindingFilter{.operation = O::kUnknown}.IsUnknown());
}

TEST(AuthorizerTest, NoAclMeansTheDefault) {
  Authorizer closed({});
  EXPECT_FALSE(closed.Authorize("User:alice", kHost, O::kRead, R::kTopic, "t"));
  Authorizer open({.allow_everyone_if_no_acl_found = true});
  EXPECT_TRUE(open.Authorize("User:alice", kHost, O::kRead, R::kTopic, "t"));
  // An ACL on the resource for someone else closes it for the others.
  open.Add(Literal(R::kTopic, "t", "User:bob", O::kRead));
  EXPECT_FALSE(open.Authorize("User:alice", kHost, O::kRead, R::kTopic, "t"));
  EXPECT_TRUE(open.Authorize("User:alice", kHost, O::kRead, R::kTopic, "u"));
}

TEST(AuthorizerTest, SuperUsersMayDoAnythingDespiteDenials) {
  Authorizer a({.super_users = {"User:admin"}});
  a.Add(Literal(R::kTopic, "*", "User:*", O::kAll, AclPermission::kDeny));
  EXPECT_TRUE(a.Authorize("User:admin", kHost, O::kWrite, R::kTopic, "t"));
  EXPECT_TRUE(a.AuthorizeAny("User:admin", kHost, O::kWrite, R::kTopic));
  EXPECT_FALSE(a.Authorize("User:alice", kHost, O::kWrite, R::kTopic, "t"));
}

TEST(AuthorizerTest, AllowOfTheOperationOrAll) {
  Authorizer a({});
  a.Add(Literal(R::kTopic, "t", "User:alice", O::kWrite));
  a.Add(Literal(R::kGroup, "g", "User:alice", O::kAll));
  EXPECT_TRUE(a.Authorize("User:alice", kHost, O::kWrite, R::kTopic, "t"));
  EXPECT_FALSE(a.Authorize("User:alice", kHost, O::kRead, R::kTopic, "t"));
  EXPECT_FALSE(a.Authorize("User:bob", kHost, O::kWrite, R::kTopic, "t"));
  EXPECT_FALSE(a.Authorize("User:alice", kHost, O::kWrite, R::kGroup, "t"));
  EXPECT_TRUE(a.Authorize("User:alice", kHost, O::kRead, R::kGroup, "g"));
  EXPECT_TRUE(a.Authorize("User:alice", kHost, O::kDelete, R::kGroup, "g"));
}

TEST(AuthorizerTest, DenyWinsOverAllow) {
  Authorizer a({});
  a.Add(Literal(R::kTopic, "*", "User:*", O::kRead));
  a.Add(Literal(R::kTopic, "secret", "User:alice", O::kRead,
                AclPermission::kDeny));
  EXPECT_FALSE(a.Authorize("User:alice", kHost, O::kRead, R::kTopic, "secret"));
  EXPECT_TRUE(a.Authorize("User:bob", kHost, O::kRead, R::kTopic, "secret"));
  EXPECT_TRUE(a.Authorize("User:alice", kHost, O::kRead, R::kTopic, "other"));
  // A denial of ALL denies every operation.
  a.Add(Acl(R::kTopic, "sec", AclPatternType::kPrefixed, "User:bob", O::kAll,
            AclPermission::kDeny));
  EXPECT_FALSE(a.Authorize("User:bob", kHost, O::kRead, R::kTopic, "secret"));
  EXPECT_TRUE(a.Authorize("User:bob", kHost, O::kRead, R::kTopic, "se"));
}

TEST(AuthorizerTest, ImpliedOperationsOnlyForAllow) {
  Authorizer a({});
  for (O op : {O::kRead, O::kWrite, O::kDelete, O::kAlter}) {
    std::string topic(Name(op));
    a.Add(Literal(R::kTopic, topic, "User:alice", op));
    EXPECT_TRUE(
        a.Authorize("User:alice", kHost, O::kDescribe, R::kTopic, topic))
        << topic;
  }
  a.Add(Literal(R::kTopic, "create", "User:alice", O::kCreate));
  EXPECT_FALSE(
      a.Authorize("User:alice", kHost, O::kDescribe, R::kTopic, "create"));
  a.Add(Literal(R::kTopic, "configs", "User:alice", O::kAlterConfigs));
  EXPECT_TRUE(a.Authorize("User:alice", kHost, O::kDescribeConfigs, R::kTopic,
                          "configs"));
  EXPECT_FALSE(
      a.Authorize("User:alice", kHost, O::kDescribe, R::kTopic, "configs"));
  // A denial of READ does not deny DESCRIBE.
  a.Add(Literal(R::kTopic, "d", "User:alice", O::kDescribe));
  a.Add(Literal(R::kTopic, "d", "User:alice", O::kRead, AclPermission::kDeny));
  EXPECT_TRUE(a.Authorize("User:alice", kHost, O::kDescribe, R::kTopic, "d"));
  EXPECT_FALSE(a.Authorize("User:alice", kHost, O::kRead, R::kTopic, "d"));
}

TEST(AuthorizerTest, WildcardsAndPrefixes) {
  Authorizer a({});
  a.Add(Acl(R::kTopic, "orders-", AclPatternType::kPrefixed, "User:*",
            O::kWrite));
  a.Add(Literal(R::kGroup, "*", "User:alice", O::kRead));
  EXPECT_TRUE(
      a.Authorize("User:bob", kHost, O::kWrite, R::kTopic, "orders-eu"));
  EXPECT_TRUE(a.Authorize("User:bob", kHost, O::kWrite, R::kTopic, "orders-"));
  EXPECT_FALSE(a.Authorize("User:bob", kHost, O::kWrite, R::kTopic, "orders"));
  EXPECT_TRUE(a.Authorize("User:alice", kHost, O::kRead, R::kGroup, "any"));
  EXPECT_FALSE(a.Authorize("User:bob", kHost, O::kRead, R::kGroup, "any"));
  // A literal ACL on a prefix of the name does not apply to it.
  a.Add(Literal(R::kTopic, "pay", "User:bob", O::kRead));
  EXPECT_FALSE(a.Authorize("User:bob", kHost, O::kRead, R::kTopic, "payments"));
}

TEST(AuthorizerTest, HostsMatchExactlyOrByWildcard) {
  Authorizer a({});
  a.Add(Acl(R::kTopic, "t", AclPatternType::kLiteral, "User:alice", O::kRead,
            AclPermission::kAllow, "10.0.0.1"));
  EXPECT_TRUE(a.Authorize("User:alice", "10.0.0.1", O::kRead, R::kTopic, "t"));
  EXPECT_FALSE(a.Authorize("User:alice", kHost, O::kRead, R::kTopic, "t"));
}

TEST(AuthorizerTest, AuthorizeAnyAsKafka) {
  Authorizer a({});
  EXPECT_FALSE(a.AuthorizeAny("User:alice", kHost, O::kWrite, R::kTopic));
  a.Add(Literal(R::kTopic, "t", "User:alice", O::kWrite));
  EXPECT_TRUE(a.AuthorizeAny("User:alice", kHost, O::kWrite, R::kTopic));
  EXPECT_FALSE(a.AuthorizeAny("User:bob", kHost, O::kWrite, R::kTopic));
  EXPECT_FALSE(a.AuthorizeAny("User:alice", kHost, O::kRead, R::kTopic));
  // Shadowed by a denial of the same name, of a prefix, or of everything.
  a.Add(Literal(R::kTopic, "t", "User:alice", O::kWrite, AclPermission::kDeny));
  EXPECT_FALSE(a.AuthorizeAny("User:alice", kHost, O::kWrite, R::kTopic));
  a.Add(Acl(R::kTopic, "orders", AclPatternType::kPrefixed, "User:alice",
            O::kAll));
  EXPECT_TRUE(a.AuthorizeAny("User:alice", kHost, O::kWrite, R::kTopic));
  a.Add(Acl(R::kTopic, "ord", AclPatternType::kPrefixed, "User:*", O::kWrite,
            AclPermission::kDeny));
  EXPECT_FALSE(a.AuthorizeAny("User:alice", kHost, O::kWrite, R::kTopic));
  Authorizer open({.allow_everyone_if_no_acl_found = true});
  EXPECT_TRUE(open.AuthorizeAny("User:alice", kHost, O::kWrite, R::kTopic));
}

TEST(AuthorizerTest, AddFindRemove) {
  Authorizer a({});
  AclBinding read = Literal(R::kTopic, "t", "User:alice", O::kRead);
  AclBinding write =
      Acl(R::kTopic, "t", AclPatternType::kPrefixed, "User:alice", O::kWrite);
  AclBinding group = Literal(R::kGroup, "g", "User:bob", O::kRead);
  EXPECT_TRUE(a.Add(read));
  EXPECT_FALSE(a.Add(read));  // already there
  EXPECT_TRUE(a.Add(write));
  EXPECT_TRUE(a.Add(group));
  EXPECT_EQ(a.Find({}).size(), 3u);
  EXPECT_EQ(a.Find({.resource_type = R::kTopic}).size(), 2u);
  EXPECT_EQ(a.Find({.pattern_type = AclPatternType::kPrefixed}),
            std::vector<AclBinding>{write});
  EXPECT_EQ(a.Find({.principal = "User:bob"}), std::vector<AclBinding>{group});
  EXPECT_EQ(a.Remove({.resource_type = R::kTopic, .operation = O::kRead}),
            std::vector<AclBinding>{read});
  EXPECT_FALSE(a.Authorize("User:alice", kHost, O::kRead, R::kTopic, "t"));
  EXPECT_TRUE(a.Authorize("User:alice", kHost, O::kWrite, R::kTopic, "tx"));
  EXPECT_EQ(a.Remove({}).size(), 2u);
  EXPECT_TRUE(a.Find({}).empty());
}

}  // namespace
}  // namespace exactly::broker
