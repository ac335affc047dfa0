// The SASL exchange (SaslHandshake, SaslAuthenticate, and the raw tokens that
// follow SaslHandshake v0) and the security admin APIs: ACLs and SCRAM
// credentials.
#ifndef EXACTLY_BROKER_HANDLERS_SECURITY_HANDLERS_H_
#define EXACTLY_BROKER_HANDLERS_SECURITY_HANDLERS_H_

#include <memory>

#include "cluster/broker_state.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"
#include "server/connection.h"
#include "server/responder.h"
#include "util/shared_buffer.h"

namespace exactly::broker {

using protocol::RequestHeader;

void HandleSaslHandshake(BrokerState& b, const RequestHeader& h,
                         protocol::SaslHandshakeRequest& request, Responder r);
void HandleSaslAuthenticate(BrokerState& b, const RequestHeader& h,
                            protocol::SaslAuthenticateRequest& request,
                            Responder r);
// After SaslHandshake v0 the client's SASL tokens come as bare size-prefixed
// frames (no request header), answered the same way.
void HandleRawSaslToken(BrokerState& b,
                        const std::shared_ptr<Connection>& connection,
                        std::string_view token, uint64_t slot);

// The ACLs of the authorizer (SECURITY_DISABLED when it is off).
void HandleCreateAcls(BrokerState& b, const RequestHeader& h,
                      protocol::CreateAclsRequest& request, Responder r);
void HandleDescribeAcls(BrokerState& b, const RequestHeader& h,
                        protocol::DescribeAclsRequest& request, Responder r);
void HandleDeleteAcls(BrokerState& b, const RequestHeader& h,
                      protocol::DeleteAclsRequest& request, Responder r);

// SCRAM credentials (KIP-554): served with the authorizer off too.
void HandleDescribeUserScramCredentials(
    BrokerState& b, const RequestHeader& h,
    protocol::DescribeUserScramCredentialsRequest& request, Responder r);
void HandleAlterUserScramCredentials(
    BrokerState& b, const RequestHeader& h,
    protocol::AlterUserScramCredentialsRequest& request, Responder r);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_SECURITY_HANDLERS_H_
