// The security APIs: the SASL exchange. Served on every listener, as Kafka
// does; on a listener without SASL a handshake is refused.
#include "handlers/api_table.h"
#include "handlers/decoded.h"
#include "handlers/security_handlers.h"

namespace exactly::broker {

std::vector<ApiHandler> SecurityApis() {
  using namespace protocol;  // NOLINT: the message types, in one table
  return {
      // v0: raw tokens follow; v1: they come in SaslAuthenticate.
      {ApiKey::kSaslHandshake, 0, 1,
       &Decoded<SaslHandshakeRequest, HandleSaslHandshake>},
      // v1 adds the session lifetime (0 here: no re-authentication).
      {ApiKey::kSaslAuthenticate, 0, 2,
       &Decoded<SaslAuthenticateRequest, HandleSaslAuthenticate>},
  };
}

}  // namespace exactly::broker
