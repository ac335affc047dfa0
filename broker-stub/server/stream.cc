#include "server/stream.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace exactly::broker {

std::string Stream::PeerSubject() {
  if (!tls_) return "";
  X509* cert = SSL_get1_peer_certificate(tls_->native_handle());
  if (cert == nullptr) return "";
  std::string out;
  BIO* bio = BIO_new(BIO_s_mem());
  // RFC 2253 order and escaping, as Java's X500Principal.getName() gives
  // Kafka's principal builder.
  X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  if (n > 0) out.assign(data, static_cast<size_t>(n));
  BIO_free(bio);
  X509_free(cert);
  return out;
}

}  // namespace exactly::broker
