// DescribeUserScramCredentials (key 50), v0, flexible (KIP-554): the SCRAM
// mechanisms and iteration counts each user has, never the credentials.
// Mechanism codes: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512 (0 unknown).
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_USER_SCRAM_CREDENTIALS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_USER_SCRAM_CREDENTIALS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DescribeUserScramCredentialsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeUserScramCredentials;
  struct User {
    std::string name;
    TaggedFields tagged_fields;
    bool operator==(const User&) const = default;
  };
  std::optional<std::vector<User>> users;  // null (or empty): every user
  TaggedFields tagged_fields;

  bool operator==(const DescribeUserScramCredentialsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.NullableArray(users, [&](User& u) {
      io.String(u.name);
      io.TaggedFields(u.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct DescribeUserScramCredentialsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeUserScramCredentials;
  struct CredentialInfo {
    int8_t mechanism = 0;
    int32_t iterations = 0;
    TaggedFields tagged_fields;
    bool operator==(const CredentialInfo&) const = default;
  };
  struct Result {
    std::string user;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::vector<CredentialInfo> credential_infos;
    TaggedFields tagged_fields;
    bool operator==(const Result&) const = default;
  };
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::vector<Result> results;
  TaggedFields tagged_fields;

  bool operator==(const DescribeUserScramCredentialsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.NullableString(error_message);
    io.Array(results, [&](Result& r) {
      io.String(r.user);
      io.Int16(r.error_code);
      io.NullableString(r.error_message);
      io.Array(r.credential_infos, [&](CredentialInfo& c) {
        io.Int8(c.mechanism);
        io.Int32(c.iterations);
        io.TaggedFields(c.tagged_fields);
      });
      io.TaggedFields(r.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_USER_SCRAM_CREDENTIALS_H_
