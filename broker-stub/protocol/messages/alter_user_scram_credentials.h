// AlterUserScramCredentials (key 51), v0, flexible (KIP-554): deletes and
// sets SCRAM credentials. An upsertion carries the salt and the salted
// password (Hi(password, salt, iterations), RFC 5802): the client salts, the
// broker never sees the password.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_ALTER_USER_SCRAM_CREDENTIALS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_ALTER_USER_SCRAM_CREDENTIALS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct AlterUserScramCredentialsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kAlterUserScramCredentials;
  struct Deletion {
    std::string name;
    int8_t mechanism = 0;
    TaggedFields tagged_fields;
    bool operator==(const Deletion&) const = default;
  };
  struct Upsertion {
    std::string name;
    int8_t mechanism = 0;
    int32_t iterations = 0;
    std::string salt;
    std::string salted_password;
    TaggedFields tagged_fields;
    bool operator==(const Upsertion&) const = default;
  };
  std::vector<Deletion> deletions;
  std::vector<Upsertion> upsertions;
  TaggedFields tagged_fields;

  bool operator==(const AlterUserScramCredentialsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(deletions, [&](Deletion& d) {
      io.String(d.name);
      io.Int8(d.mechanism);
      io.TaggedFields(d.tagged_fields);
    });
    io.Array(upsertions, [&](Upsertion& u) {
      io.String(u.name);
      io.Int8(u.mechanism);
      io.Int32(u.iterations);
      io.Bytes(u.salt);
      io.Bytes(u.salted_password);
      io.TaggedFields(u.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

struct AlterUserScramCredentialsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kAlterUserScramCredentials;
  struct Result {
    std::string user;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    TaggedFields tagged_fields;
    bool operator==(const Result&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<Result> results;
  TaggedFields tagged_fields;

  bool operator==(const AlterUserScramCredentialsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(results, [&](Result& r) {
      io.String(r.user);
      io.Int16(r.error_code);
      io.NullableString(r.error_message);
      io.TaggedFields(r.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_ALTER_USER_SCRAM_CREDENTIALS_H_
