// Which connections come from this process's own brokers. Kafka lets
// brokers through its authorizer by their principal (a super user); the
// bundled brokers talk to each other over the PLAINTEXT port, where every
// client is User:ANONYMOUS, so they are told apart otherwise: a broker's
// peer client records the local address of each socket it connects, and the
// receiving broker finds a connection's remote address among them. Both ends
// are in this process, so no outside client can claim to be a broker (an
// address is unique while its socket is open).
#ifndef EXACTLY_BROKER_SECURITY_INTER_BROKER_H_
#define EXACTLY_BROKER_SECURITY_INTER_BROKER_H_

#include <string>
#include <string_view>

namespace exactly::broker {

// "address:port", as Connection::peer() spells a client's address.
void AddInterBrokerEndpoint(const std::string& endpoint);
void RemoveInterBrokerEndpoint(const std::string& endpoint);
bool IsInterBrokerEndpoint(std::string_view endpoint);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_INTER_BROKER_H_
