// Checks SecurityOptions before a broker starts: one listener per protocol,
// none PLAINTEXT (that one is BrokerOptions::port), known SASL mechanisms.
#ifndef EXACTLY_BROKER_SECURITY_VALIDATE_H_
#define EXACTLY_BROKER_SECURITY_VALIDATE_H_

#include "absl/status/status.h"
#include "exactly/broker/security.h"

namespace exactly::broker {

absl::Status ValidateSecurityOptions(const SecurityOptions& options);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_VALIDATE_H_
