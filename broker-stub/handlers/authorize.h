// The authorizer's checks as handlers make them: whether the sender of a
// request may perform an operation on a resource. With the authorizer off
// (the default) a check is one branch, as this broker is benchmarked.
#ifndef EXACTLY_BROKER_HANDLERS_AUTHORIZE_H_
#define EXACTLY_BROKER_HANDLERS_AUTHORIZE_H_

#include <string_view>

#include "cluster/broker_state.h"
#include "security/acl.h"
#include "security/authorizer.h"
#include "server/responder.h"

namespace exactly::broker {

// The decision for the request's connection: its principal and address;
// brokers of this process are let through (security/inter_broker.h).
bool Authorized(const Authorizer& authorizer, const Responder& r,
                AclOperation operation, AclResourceType type,
                std::string_view name);
// The same for "some resource of this type" (Kafka's authorizeByResourceType).
bool AuthorizedOnAny(const Authorizer& authorizer, const Responder& r,
                     AclOperation operation, AclResourceType type);

inline bool Allowed(const BrokerState& b, const Responder& r,
                    AclOperation operation, AclResourceType type,
                    std::string_view name) {
  const Authorizer* authorizer = b.authorizer();
  if (authorizer == nullptr) [[likely]]
    return true;
  return Authorized(*authorizer, r, operation, type, name);
}

inline bool AllowedOnCluster(const BrokerState& b, const Responder& r,
                             AclOperation operation) {
  return Allowed(b, r, operation, AclResourceType::kCluster,
                 kClusterResourceName);
}

inline bool AllowedOnAny(const BrokerState& b, const Responder& r,
                         AclOperation operation, AclResourceType type) {
  const Authorizer* authorizer = b.authorizer();
  if (authorizer == nullptr) [[likely]]
    return true;
  return AuthorizedOnAny(*authorizer, r, operation, type);
}

// An idempotent producer without a transactional id may write: Kafka 3.x
// asks for IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
inline bool AllowedIdempotentWrite(const BrokerState& b, const Responder& r) {
  return AllowedOnCluster(b, r, AclOperation::kIdempotentWrite) ||
         AllowedOnAny(b, r, AclOperation::kWrite, AclResourceType::kTopic);
}

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_AUTHORIZE_H_
