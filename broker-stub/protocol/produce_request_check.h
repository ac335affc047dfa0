// The checks Apache Kafka makes on a Produce request's records before any
// log sees them (clients/.../requests/ProduceRequest.java validateRecords and
// RequestUtils.hasTransactionalRecords, Kafka 3.x; KafkaApis.scala
// handleProduceRequest calls both). The per-batch checks of an append are
// CheckProduceBatches.
#ifndef EXACTLY_BROKER_PROTOCOL_PRODUCE_REQUEST_CHECK_H_
#define EXACTLY_BROKER_PROTOCOL_PRODUCE_REQUEST_CHECK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/error_code.h"

namespace exactly::protocol {

struct ProduceRecordsCheck {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
  bool ok() const { return error == ErrorCode::kNone; }
};

// One partition's records in a Produce request of `version`: from v3 exactly
// one batch (INVALID_RECORD), and no zstd below v7
// (UNSUPPORTED_COMPRESSION_TYPE). Records that do not parse pass here and are
// refused by CheckProduceBatches.
ProduceRecordsCheck CheckProduceRecords(int16_t version,
                                        std::string_view records);

// Whether the first batch of one partition's records is transactional: Kafka
// looks at first batches only when deciding that a request is transactional.
bool FirstBatchIsTransactional(std::string_view records);

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_PRODUCE_REQUEST_CHECK_H_
