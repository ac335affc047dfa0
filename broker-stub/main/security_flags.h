// The exactly-broker flags that configure security (Kafka's listeners,
// ssl.*, sasl.* and authorizer settings), parsed into BrokerOptions::security.
#ifndef EXACTLY_BROKER_MAIN_SECURITY_FLAGS_H_
#define EXACTLY_BROKER_MAIN_SECURITY_FLAGS_H_

#include "absl/status/status.h"
#include "exactly/broker/broker.h"

namespace exactly::broker {

// InvalidArgument, saying which flag is wrong and how, for a bad value.
absl::Status ApplySecurityFlags(SecurityOptions& security);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_MAIN_SECURITY_FLAGS_H_
