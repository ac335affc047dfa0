#include "security/scram_crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace exactly::broker::scram {

namespace {
const EVP_MD* Digest(ScramAlgorithm algorithm) {
  return algorithm == ScramAlgorithm::kSha256 ? EVP_sha256() : EVP_sha512();
}
}  // namespace

std::string Hash(ScramAlgorithm algorithm, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), out, &n, Digest(algorithm), nullptr);
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string Hmac(ScramAlgorithm algorithm, std::string_view key,
                 std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(Digest(algorithm), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out,
       &n);
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string SaltPassword(ScramAlgorithm algorithm, std::string_view password,
                         std::string_view salt, int iterations) {
  std::string out(static_cast<size_t>(EVP_MD_get_size(Digest(algorithm))),
                  '\0');
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()),
                    static_cast<int>(salt.size()), iterations,
                    Digest(algorithm), static_cast<int>(out.size()),
                    reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()),
                 static_cast<int>(n)) != 1) {
    // OpenSSL's generator failing means the machine cannot do cryptography.
    throw std::runtime_error("RAND_bytes failed");
  }
  return out;
}

bool SameBytes(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace exactly::broker::scram
