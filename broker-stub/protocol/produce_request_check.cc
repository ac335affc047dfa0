#include "protocol/produce_request_check.h"

#include "absl/strings/str_cat.h"
#include "protocol/record_batch.h"

namespace exactly::protocol {

namespace {

// Whether `rest` starts with a whole batch: Kafka's batch iterator
// (ByteBufferLogInputStream) yields nothing for a partial one.
bool StartsWithWholeBatch(std::string_view rest) {
  if (rest.size() <= kBatchMagicOffset) return false;
  int32_t length = 0;
  for (size_t i = 8; i < kBatchLengthFieldEnd; ++i) {
    length = static_cast<int32_t>((static_cast<uint32_t>(length) << 8) |
                                  static_cast<uint8_t>(rest[i]));
  }
  return length >= 0 &&
         static_cast<size_t>(length) <= rest.size() - kBatchLengthFieldEnd;
}

}  // namespace

ProduceRecordsCheck CheckProduceRecords(int16_t version,
                                        std::string_view records) {
  ProduceRecordsCheck check;
  // Kafka skips these checks below v3 for old clients' sake.
  if (version < 3) return check;
  absl::StatusOr<RecordBatchHeader> first = ParseBatchHeader(records);
  if (!first.ok()) return check;
  if (version < 7 && first->compression() == Compression::kZstd) {
    check.error = ErrorCode::kUnsupportedCompressionType;
    check.message =
        absl::StrCat("zstd needs Produce v7 or later; this is v", version);
    return check;
  }
  if (first->size_in_bytes() < records.size() &&
      StartsWithWholeBatch(records.substr(first->size_in_bytes()))) {
    check.error = ErrorCode::kInvalidRecord;
    check.message =
        absl::StrCat("more than one record batch for a partition in Produce v",
                     version, " (v3+ carries exactly one)");
  }
  return check;
}

bool FirstBatchIsTransactional(std::string_view records) {
  absl::StatusOr<RecordBatchHeader> first = ParseBatchHeader(records);
  return first.ok() && first->is_transactional();
}

}  // namespace exactly::protocol
