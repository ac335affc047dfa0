// InitProducerId (key 22), v0-4. Flexible from v2; v3 adds the KIP-360 epoch
// bump fields.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_INIT_PRODUCER_ID_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_INIT_PRODUCER_ID_H_

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/serde.h"

namespace exactly::protocol {

struct InitProducerIdRequest {
  static constexpr ApiKey kApiKey = ApiKey::kInitProducerId;
  std::optional<std::string> transactional_id;
  int32_t transaction_timeout_ms = 0;
  int64_t producer_id = -1;     // v3+: the current id, for an epoch bump
  int16_t producer_epoch = -1;  // v3+
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    io.NullableString(transactional_id);
    io.Int32(transaction_timeout_ms);
    if (io.version() >= 3) {
      io.Int64(producer_id);
      io.Int16(producer_epoch);
    }
    io.TaggedFields(tagged_fields);
  }
};

struct InitProducerIdResponse {
  static constexpr ApiKey kApiKey = ApiKey::kInitProducerId;
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.Int64(producer_id);
    io.Int16(producer_epoch);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_INIT_PRODUCER_ID_H_
