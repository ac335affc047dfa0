// The security APIs: the SASL exchange, the ACLs and SCRAM credentials. Served
// on every listener, as Kafka does; on a listener without SASL a handshake is
// refused. The ACL APIs are advertised with the authorizer off too: Kafka
// answers them SECURITY_DISABLED then, and so do we.
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
      // v1 adds pattern types (KIP-290); flexible from v2; v3 adds the USER
      // resource type.
      {ApiKey::kDescribeAcls, 0, 3,
       &Decoded<DescribeAclsRequest, HandleDescribeAcls>},
      {ApiKey::kCreateAcls, 0, 3,
       &Decoded<CreateAclsRequest, HandleCreateAcls>},
      {ApiKey::kDeleteAcls, 0, 3,
       &Decoded<DeleteAclsRequest, HandleDeleteAcls>},
      // KIP-554; only v0 exists (flexible).
      {ApiKey::kDescribeUserScramCredentials, 0, 0,
       &Decoded<DescribeUserScramCredentialsRequest,
                HandleDescribeUserScramCredentials>},
      {ApiKey::kAlterUserScramCredentials, 0, 0,
       &Decoded<AlterUserScramCredentialsRequest,
                HandleAlterUserScramCredentials>},
  };
}

}  // namespace exactly::broker
