// The TLS settings of the broker's SSL and SASL_SSL listeners, as one
// asio::ssl::context: certificate chain, key, and (client authentication)
// the CAs a client certificate must chain to.
#ifndef EXACTLY_BROKER_SECURITY_TLS_CONTEXT_H_
#define EXACTLY_BROKER_SECURITY_TLS_CONTEXT_H_

#include <asio/ssl/context.hpp>
#include <memory>

#include "absl/status/statusor.h"
#include "exactly/broker/security.h"

namespace exactly::broker {

// InvalidArgument naming the file and OpenSSL's reason when a file is
// missing or unusable.
absl::StatusOr<std::unique_ptr<asio::ssl::context>> NewTlsContext(
    const SecurityOptions& options);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SECURITY_TLS_CONTEXT_H_
