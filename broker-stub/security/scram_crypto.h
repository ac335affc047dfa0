// The primitives SCRAM is built from (RFC 5802), on OpenSSL: the hash, its
// HMAC, PBKDF2 and random bytes.
#ifndef EXACTLY_BROKER_SECURITY_SCRAM_CRYPTO_H_
#define EXACTLY_BROKER_SECURITY_SCRAM_CRYPTO_H_

#include <string>
#include <string_view>

#include "security/credentials.h"

namespace exactly::broker::scram {

std::string Hash(ScramAlgorithm algorithm, std::string_view data);
std::string Hmac(ScramAlgorithm algorithm, std::string_view key,
                 std::string_view data);
// Hi() of RFC 5802: PBKDF2 with HMAC of the algorithm's hash.
std::string SaltPassword(ScramAlgorithm algorithm, std::string_view password,
                         std::string_view salt, int iterations);
std::string RandomBytes(size_t n);
// Constant-time comparison (a proof must not leak how much of it matched).
bool SameBytes(std::string_view a, std::string_view b);

}  // namespace exactly::broker::scram

#endif  // EXACTLY_BROKER_SECURITY_SCRAM_CRYPTO_H_
