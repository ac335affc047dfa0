// A throwaway PKI for TLS tests, made with OpenSSL when the test runs (no key
// is ever committed): a CA, a broker certificate for localhost / 127.0.0.1
// and a client certificate, all signed by that CA, as PEM files in `dir`.
#ifndef EXACTLY_TESTS_SUPPORT_TEST_CERTIFICATES_H_
#define EXACTLY_TESTS_SUPPORT_TEST_CERTIFICATES_H_

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <string>

namespace exactly::testing {

struct TestPki {
  std::string ca_certificate;  // PEM files
  std::string broker_certificate;
  std::string broker_key;
  std::string client_certificate;
  std::string client_key;
  std::string client_subject;  // as the broker names it: "CN=...,O=..."
};

namespace pki_internal {

inline void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name` (and organisation "exactly
// tests"), signed by `issuer`/`issuer_key` (itself when both are null).
inline X509* Issue(EVP_PKEY* key, const char* common_name, X509* issuer,
                   EVP_PKEY* issuer_key, long serial, bool ca,
                   const char* subject_alt_name) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 7L * 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(
      name, "O", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("exactly tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert;
  AddExtension(cert, signer, NID_basic_constraints,
               ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (subject_alt_name != nullptr)
    AddExtension(cert, signer, NID_subject_alt_name, subject_alt_name);
  X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256());
  return cert;
}

inline bool Write(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  bool ok = cert ? PEM_write_X509(f, cert) == 1
                 : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr,
                                        nullptr) == 1;
  return std::fclose(f) == 0 && ok;
}

}  // namespace pki_internal

// Writes the PKI's files into `dir`; an empty TestPki when OpenSSL or the
// disk fails.
inline TestPki MakeTestPki(const std::string& dir) {
  using namespace pki_internal;
  EVP_PKEY* ca_key = EVP_EC_gen("P-256");
  EVP_PKEY* broker_key = EVP_EC_gen("P-256");
  EVP_PKEY* client_key = EVP_EC_gen("P-256");
  X509* ca =
      Issue(ca_key, "exactly test CA", nullptr, nullptr, 1, true, nullptr);
  X509* broker = Issue(broker_key, "localhost", ca, ca_key, 2, false,
                       "DNS:localhost,IP:127.0.0.1");
  X509* client = Issue(client_key, "client-app", ca, ca_key, 3, false, nullptr);
  TestPki pki{dir + "/ca.pem",     dir + "/broker.pem",
              dir + "/broker.key", dir + "/client.pem",
              dir + "/client.key", "CN=client-app,O=exactly tests"};
  bool ok = Write(pki.ca_certificate, ca, nullptr) &&
            Write(pki.broker_certificate, broker, nullptr) &&
            Write(pki.broker_key, nullptr, broker_key) &&
            Write(pki.client_certificate, client, nullptr) &&
            Write(pki.client_key, nullptr, client_key);
  X509_free(ca);
  X509_free(broker);
  X509_free(client);
  EVP_PKEY_free(ca_key);
  EVP_PKEY_free(broker_key);
  EVP_PKEY_free(client_key);
  return ok ? pki : TestPki{};
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_TEST_CERTIFICATES_H_
