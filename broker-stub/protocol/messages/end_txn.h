// EndTxn (key 26), v0-3. Flexible from v3.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_END_TXN_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_END_TXN_H_

#include <cstdint>
#include <string>

#include "protocol/serde.h"

namespace exactly::protocol {

struct EndTxnRequest {
  static constexpr ApiKey kApiKey = ApiKey::kEndTxn;
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  bool committed = false;  // true commits, false aborts
  TaggedFields tagged_fields;

  bool operator==(const EndTxnRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.String(transactional_id);
    io.Int64(producer_id);
    io.Int16(producer_epoch);
    io.Bool(committed);
    io.TaggedFields(tagged_fields);
  }
};

struct EndTxnResponse {
  static constexpr ApiKey kApiKey = ApiKey::kEndTxn;
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  TaggedFields tagged_fields;

  bool operator==(const EndTxnResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_END_TXN_H_
