#include "handlers/authorize.h"

#include <memory>
#include <string>

#include "security/inter_broker.h"
#include "server/connection.h"

namespace exactly::broker {

namespace {

// The connection's session, its client's IP address (Kafka matches an ACL's
// host against that), and whether it is another broker's.
struct Sender {
  std::shared_ptr<Connection> connection;
  std::string_view host;
  bool trusted = false;
};

Sender SenderOf(const Responder& r) {
  Sender sender{r.connection()};
  if (sender.connection == nullptr) return sender;
  const std::string& peer = sender.connection->peer();
  Session& session = sender.connection->session();
  if (!session.inter_broker().has_value())
    session.set_inter_broker(IsInterBrokerEndpoint(peer));
  sender.trusted = *session.inter_broker();
  sender.host = std::string_view(peer).substr(0, peer.rfind(':'));
  return sender;
}

}  // namespace

bool Authorized(const Authorizer& authorizer, const Responder& r,
                AclOperation operation, AclResourceType type,
                std::string_view name) {
  Sender sender = SenderOf(r);
  if (sender.connection == nullptr) return false;  // nobody to answer
  return sender.trusted ||
         authorizer.Authorize(sender.connection->session().principal(),
                              sender.host, operation, type, name);
}

bool AuthorizedOnAny(const Authorizer& authorizer, const Responder& r,
                     AclOperation operation, AclResourceType type) {
  Sender sender = SenderOf(r);
  if (sender.connection == nullptr) return false;
  return sender.trusted ||
         authorizer.AuthorizeAny(sender.connection->session().principal(),
                                 sender.host, operation, type);
}

}  // namespace exactly::broker
