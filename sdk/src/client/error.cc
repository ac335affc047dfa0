// Error mapping: Kafka error codes and flags <-> absl::Status.
#include "exactly/error.h"

#include <librdkafka/rdkafka.h>

#include <charconv>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace exactly {
namespace {

// Flag bits in the payload.
constexpr int kRetriableBit = 1;
constexpr int kAbortBit = 2;
constexpr int kFatalBit = 4;

// Transient conditions: the same call can succeed later (Kafka's
// RetriableException family plus librdkafka's local transient codes).
bool IsRetriableCode(rd_kafka_resp_err_t code) {
  switch (code) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__WAIT_CACHE:
    case RD_KAFKA_RESP_ERR__PREV_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR__CONFLICT:
    case RD_KAFKA_RESP_ERR__RETRY:
    case RD_KAFKA_RESP_ERR_INVALID_MSG:  // CORRUPT_MESSAGE
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_FETCH_SESSION_ID_NOT_FOUND:
    case RD_KAFKA_RESP_ERR_INVALID_FETCH_SESSION_EPOCH:
    case RD_KAFKA_RESP_ERR_LISTENER_NOT_FOUND:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_PREFERRED_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT:
    case RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED:
      return true;
    default:
      return false;
  }
}

// The client instance cannot continue: fencing, lost authorization for the
// transactional id or cluster, or a broken idempotence guarantee
// (rdkafka_txnmgr.c raises these as fatal).
bool IsFatalCode(rd_kafka_resp_err_t code) {
  switch (code) {
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR__GAPLESS_GUARANTEE:
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
    case RD_KAFKA_RESP_ERR_INVALID_TXN_STATE:
    case RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT:
    case RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID:
      return true;
    default:
      return false;
  }
}

// The current transaction cannot commit, but a new one can: librdkafka puts
// the transaction in its abortable state for these.
bool IsAbortableCode(rd_kafka_resp_err_t code) {
  switch (code) {
    case RD_KAFKA_RESP_ERR__INCONSISTENT:  // a record failed delivery
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER:
    case RD_KAFKA_RESP_ERR_UNKNOWN_PRODUCER_ID:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_ID_MAPPING:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION:
    case RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID:
    case RD_KAFKA_RESP_ERR_OPERATION_NOT_ATTEMPTED:
      return true;
    default:
      return false;
  }
}

bool IsFencedCode(int code) {
  return code == RD_KAFKA_RESP_ERR__FENCED ||
         code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
         code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH ||
         code == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID;
}

// A status code that says what kind of failure it is; the flags say what to
// do about it.
absl::StatusCode CodeTableFor(rd_kafka_resp_err_t code) {
  switch (code) {
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED:
      return absl::StatusCode::kResourceExhausted;
    case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
    case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT:
    case RD_KAFKA_RESP_ERR__DESTROY:
      return absl::StatusCode::kCancelled;
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
      return absl::StatusCode::kPermissionDenied;
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR__INVALID_TYPE:
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
    case RD_KAFKA_RESP_ERR_INVALID_REQUEST:
    case RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP:
      return absl::StatusCode::kInvalidArgument;
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR__UNKNOWN_GROUP:
    case RD_KAFKA_RESP_ERR__NOENT:
      return absl::StatusCode::kNotFound;
    case RD_KAFKA_RESP_ERR__NOT_IMPLEMENTED:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT:
      return absl::StatusCode::kUnimplemented;
    case RD_KAFKA_RESP_ERR__STATE:
    case RD_KAFKA_RESP_ERR__NOT_CONFIGURED:
    case RD_KAFKA_RESP_ERR_INVALID_TXN_STATE:
      return absl::StatusCode::kFailedPrecondition;
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
      return absl::StatusCode::kOutOfRange;
    default:
      return absl::StatusCode::kUnknown;
  }
}

std::string EncodePayload(const KafkaError& error) {
  const int flags = (error.retriable ? kRetriableBit : 0) |
                    (error.txn_requires_abort ? kAbortBit : 0) |
                    (error.fatal ? kFatalBit : 0);
  return absl::StrCat(error.code, " ", flags, " ", error.name);
}

bool ParseInt(std::string_view text, int& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

}  // namespace

KafkaError KafkaErrorFromCode(int code) {
  const auto err = static_cast<rd_kafka_resp_err_t>(code);
  KafkaError error;
  error.code = code;
  error.name = rd_kafka_err2name(err);
  error.fatal = IsFatalCode(err);
  // A fatal error is neither retriable nor abortable: nothing but a new
  // client instance helps.
  error.retriable = !error.fatal && IsRetriableCode(err);
  error.txn_requires_abort = !error.fatal && IsAbortableCode(err);
  return error;
}

absl::StatusCode StatusCodeFor(const KafkaError& error) {
  const auto code = static_cast<rd_kafka_resp_err_t>(error.code);
  if (code == RD_KAFKA_RESP_ERR__TIMED_OUT ||
      code == RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE ||
      code == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT ||
      code == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT) {
    return absl::StatusCode::kDeadlineExceeded;
  }
  const absl::StatusCode by_code = CodeTableFor(code);
  if (error.fatal) {
    if (IsFencedCode(error.code)) return absl::StatusCode::kFailedPrecondition;
    return by_code != absl::StatusCode::kUnknown ? by_code
                                                 : absl::StatusCode::kInternal;
  }
  if (error.txn_requires_abort) return absl::StatusCode::kAborted;
  if (by_code != absl::StatusCode::kUnknown) return by_code;
  if (error.retriable) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kUnknown;
}

absl::Status MakeKafkaStatus(const KafkaError& error,
                             std::string_view message) {
  absl::Status status(StatusCodeFor(error),
                      absl::string_view(message.data(), message.size()));
  status.SetPayload(kKafkaErrorTypeUrl, absl::Cord(EncodePayload(error)));
  return status;
}

std::optional<KafkaError> GetKafkaError(const absl::Status& status) {
  if (status.ok()) return std::nullopt;
  absl::optional<absl::Cord> payload = status.GetPayload(kKafkaErrorTypeUrl);
  if (!payload.has_value()) return std::nullopt;
  const std::string text(*payload);
  const size_t first = text.find(' ');
  const size_t second =
      first == std::string::npos ? first : text.find(' ', first + 1);
  if (second == std::string::npos) return std::nullopt;
  KafkaError error;
  int flags = 0;
  if (!ParseInt(std::string_view(text).substr(0, first), error.code) ||
      !ParseInt(std::string_view(text).substr(first + 1, second - first - 1),
                flags)) {
    return std::nullopt;
  }
  error.name = text.substr(second + 1);
  error.retriable = (flags & kRetriableBit) != 0;
  error.txn_requires_abort = (flags & kAbortBit) != 0;
  error.fatal = (flags & kFatalBit) != 0;
  return error;
}

bool IsRetriable(const absl::Status& status) {
  auto error = GetKafkaError(status);
  return error.has_value() && error->retriable;
}

bool IsTxnRequiresAbort(const absl::Status& status) {
  auto error = GetKafkaError(status);
  return error.has_value() && error->txn_requires_abort;
}

bool IsFatal(const absl::Status& status) {
  auto error = GetKafkaError(status);
  return error.has_value() && error->fatal;
}

bool IsFenced(const absl::Status& status) {
  auto error = GetKafkaError(status);
  return error.has_value() && error->fatal && IsFencedCode(error->code);
}

std::string KafkaErrorName(const absl::Status& status) {
  auto error = GetKafkaError(status);
  return error.has_value() ? error->name : std::string();
}

int KafkaErrorCode(const absl::Status& status) {
  auto error = GetKafkaError(status);
  return error.has_value() ? error->code : 0;
}

TxnAction NextTxnAction(const absl::Status& status) {
  if (status.ok()) return TxnAction::kDone;
  auto error = GetKafkaError(status);
  // librdkafka: "treat errors that have neither the retriable nor the
  // abortable flag set as fatal". Fatal wins over the other flags.
  if (!error.has_value() || error->fatal) return TxnAction::kGiveUp;
  if (error->txn_requires_abort) return TxnAction::kAbortAndRerun;
  if (error->retriable) return TxnAction::kRetry;
  return TxnAction::kGiveUp;
}

}  // namespace exactly
