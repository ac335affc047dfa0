// AddOffsetsToTxn (key 25), v0-3. Flexible from v3. Adds the group's
// __consumer_offsets partition to the transaction, ahead of TxnOffsetCommit.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_OFFSETS_TO_TXN_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_OFFSETS_TO_TXN_H_

#include <cstdint>
#include <string>

#include "protocol/serde.h"

namespace exactly::protocol {

struct AddOffsetsToTxnRequest {
  static constexpr ApiKey kApiKey = ApiKey::kAddOffsetsToTxn;
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  std::string group_id;
  TaggedFields tagged_fields;

  bool operator==(const AddOffsetsToTxnRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.String(transactional_id);
    io.Int64(producer_id);
    io.Int16(producer_epoch);
    io.String(group_id);
    io.TaggedFields(tagged_fields);
  }
};

struct AddOffsetsToTxnResponse {
  static constexpr ApiKey kApiKey = ApiKey::kAddOffsetsToTxn;
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  TaggedFields tagged_fields;

  bool operator==(const AddOffsetsToTxnResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_OFFSETS_TO_TXN_H_
