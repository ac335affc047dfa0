#include "security/tls_context.h"

#include "absl/strings/str_cat.h"

namespace exactly::broker {

absl::StatusOr<std::unique_ptr<asio::ssl::context>> NewTlsContext(
    const SecurityOptions& options) {
  if (options.ssl_certificate_file.empty() ||
      options.ssl_private_key_file.empty()) {
    return absl::InvalidArgumentError(
        "an SSL or SASL_SSL listener needs ssl_certificate_file and "
        "ssl_private_key_file");
  }
  // TLS 1.2 and 1.3, as Kafka's default ssl.enabled.protocols.
  auto context =
      std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  context->set_options(
      asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
      asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
      asio::ssl::context::no_tlsv1_1);
  asio::error_code ec;
  context->use_certificate_chain_file(options.ssl_certificate_file, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("ssl_certificate_file ",
                                                   options.ssl_certificate_file,
                                                   ": ", ec.message()));
  }
  context->use_private_key_file(options.ssl_private_key_file,
                                asio::ssl::context::pem, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("ssl_private_key_file ",
                                                   options.ssl_private_key_file,
                                                   ": ", ec.message()));
  }
  if (!options.ssl_ca_file.empty()) {
    context->load_verify_file(options.ssl_ca_file, ec);
    if (ec) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ssl_ca_file ", options.ssl_ca_file, ": ", ec.message()));
    }
    context->set_verify_mode(asio::ssl::verify_peer |
                             asio::ssl::verify_fail_if_no_peer_cert);
  }
  return context;
}

}  // namespace exactly::broker
