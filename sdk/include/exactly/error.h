// One error model for the whole SDK: every fallible call returns absl::Status
// or absl::StatusOr, and a status that came from Kafka carries the Kafka error
// (librdkafka code and name) plus the three flags every Kafka client has:
// retriable, txn_requires_abort (abortable) and fatal. Test them with the free
// functions below rather than with the absl::StatusCode, which is only a
// coarse summary.
#ifndef EXACTLY_ERROR_H_
#define EXACTLY_ERROR_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace exactly {

// Type URL of the status payload that carries a KafkaError.
inline constexpr char kKafkaErrorTypeUrl[] = "exactly.dev/kafka-error";

// A Kafka error as librdkafka reports it.
struct KafkaError {
  int code = 0;            // rd_kafka_resp_err_t: broker codes >= 1, local < -1
  std::string name;        // rd_kafka_err2name(), e.g. "INVALID_PRODUCER_EPOCH"
  bool retriable = false;  // the same call may succeed if repeated
  bool txn_requires_abort = false;  // abort the transaction, then run it again
  bool fatal = false;               // this client instance cannot continue
};

// The flags librdkafka's documented rules give a bare error code (one that
// arrives without an rd_kafka_error_t: delivery reports, consumer errors,
// produce() results). Errors returned by the transactional API carry their
// own flags, which the SDK keeps as they are.
KafkaError KafkaErrorFromCode(int code);

// The absl::StatusCode the SDK uses for a Kafka error.
absl::StatusCode StatusCodeFor(const KafkaError& error);

// A status with StatusCodeFor(error), `message`, and `error` as payload.
absl::Status MakeKafkaStatus(const KafkaError& error, std::string_view message);

// The Kafka error carried by `status`, if it came from Kafka.
std::optional<KafkaError> GetKafkaError(const absl::Status& status);

bool IsRetriable(const absl::Status& status);
bool IsTxnRequiresAbort(const absl::Status& status);
bool IsFatal(const absl::Status& status);
// Fatal because another instance with the same transactional.id (or a newer
// group generation) took over. Final: rebuilding would fight the new owner.
bool IsFenced(const absl::Status& status);
// The librdkafka error name ("" if the status did not come from Kafka).
std::string KafkaErrorName(const absl::Status& status);
// The librdkafka error code (0 if the status did not come from Kafka).
int KafkaErrorCode(const absl::Status& status);

// What the documented transactional rules say to do after a call failed.
enum class TxnAction {
  kDone,           // the call succeeded
  kRetry,          // retriable: call the same API again (after a short pause)
  kAbortAndRerun,  // abortable: abort the transaction, then run it again
  kGiveUp,         // fatal, or neither flag: stop and surface the error
};
TxnAction NextTxnAction(const absl::Status& status);

}  // namespace exactly

#endif  // EXACTLY_ERROR_H_
