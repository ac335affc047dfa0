// The error model: Kafka errors on absl::Status, and the classification of
// every error code librdkafka's transactional API can return.
#include "exactly/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <stdexcept>
#include <string>

#include "client/callback_guard.h"
#include "client/rdkafka_util.h"

namespace exactly {
namespace {

using ::testing::HasSubstr;

TEST(KafkaStatusTest, RoundTripsCodeNameAndFlags) {
  KafkaError in{.code = RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS,
                .name = "CONCURRENT_TRANSACTIONS",
                .retriable = true,
                .txn_requires_abort = false,
                .fatal = false};
  absl::Status s = MakeKafkaStatus(in, "commit_transaction failed");
  EXPECT_EQ(s.message(), "commit_transaction failed");
  std::optional<KafkaError> out = GetKafkaError(s);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->code, in.code);
  EXPECT_EQ(out->name, in.name);
  EXPECT_TRUE(out->retriable);
  EXPECT_FALSE(out->txn_requires_abort);
  EXPECT_FALSE(out->fatal);
  EXPECT_EQ(KafkaErrorName(s), "CONCURRENT_TRANSACTIONS");
  EXPECT_EQ(KafkaErrorCode(s), RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS);
  EXPECT_TRUE(s.GetPayload(kKafkaErrorTypeUrl).has_value());
}

TEST(KafkaStatusTest, AllFlagCombinationsSurvive) {
  for (int bits = 0; bits < 8; ++bits) {
    KafkaError in{.code = -172, .name = "_STATE"};
    in.retriable = bits & 1;
    in.txn_requires_abort = bits & 2;
    in.fatal = bits & 4;
    absl::Status s = MakeKafkaStatus(in, "m");
    EXPECT_EQ(IsRetriable(s), in.retriable) << bits;
    EXPECT_EQ(IsTxnRequiresAbort(s), in.txn_requires_abort) << bits;
    EXPECT_EQ(IsFatal(s), in.fatal) << bits;
  }
}

TEST(KafkaStatusTest, OtherStatusesAreNotKafkaErrors) {
  for (const absl::Status& s :
       {absl::OkStatus(), absl::InvalidArgumentError("user error")}) {
    EXPECT_FALSE(GetKafkaError(s).has_value());
    EXPECT_FALSE(IsRetriable(s));
    EXPECT_FALSE(IsTxnRequiresAbort(s));
    EXPECT_FALSE(IsFatal(s));
    EXPECT_FALSE(IsFenced(s));
    EXPECT_EQ(KafkaErrorName(s), "");
    EXPECT_EQ(KafkaErrorCode(s), 0);
  }
  EXPECT_EQ(NextTxnAction(absl::OkStatus()), TxnAction::kDone);
  // An error of the application's own is not retried or re-run.
  EXPECT_EQ(NextTxnAction(absl::InvalidArgumentError("x")), TxnAction::kGiveUp);
}

TEST(KafkaStatusTest, MalformedPayloadIsIgnored) {
  absl::Status s = absl::UnknownError("x");
  s.SetPayload(kKafkaErrorTypeUrl, absl::Cord("not a kafka error"));
  EXPECT_FALSE(GetKafkaError(s).has_value());
}

// How librdkafka flags an error code when the transactional API returns it
// (rdkafka_txnmgr.c, v2.0.2), and what the SDK must then do.
struct TxnCase {
  const char* api;  // an API that returns it
  rd_kafka_resp_err_t code;
  bool retriable;
  bool abortable;
  bool fatal;
  TxnAction action;
  absl::StatusCode status_code;
  bool fenced = false;
};

std::string Name(const TxnCase& c) {
  return std::string(c.api) + " " + rd_kafka_err2name(c.code);
}

void PrintTo(const TxnCase& c, std::ostream* os) { *os << Name(c); }

class TxnErrorTest : public ::testing::TestWithParam<TxnCase> {};

// The flags of an error object are kept as librdkafka set them, and the
// documented rules follow from them.
TEST_P(TxnErrorTest, FlagsFromTheErrorObjectDecideTheAction) {
  const TxnCase& c = GetParam();
  KafkaError error{.code = c.code,
                   .name = rd_kafka_err2name(c.code),
                   .retriable = c.retriable,
                   .txn_requires_abort = c.abortable,
                   .fatal = c.fatal};
  absl::Status s = MakeKafkaStatus(error, Name(c));
  EXPECT_EQ(IsRetriable(s), c.retriable) << Name(c);
  EXPECT_EQ(IsTxnRequiresAbort(s), c.abortable) << Name(c);
  EXPECT_EQ(IsFatal(s), c.fatal) << Name(c);
  EXPECT_EQ(IsFenced(s), c.fenced) << Name(c);
  EXPECT_EQ(NextTxnAction(s), c.action) << Name(c);
  EXPECT_EQ(s.code(), c.status_code) << Name(c) << ": " << s;
  EXPECT_EQ(KafkaErrorName(s), rd_kafka_err2name(c.code));
}

// The same code arriving bare (a delivery report, a produce() result) gets
// the same flags from the SDK's table.
TEST_P(TxnErrorTest, BareCodeGetsTheSameFlags) {
  const TxnCase& c = GetParam();
  KafkaError error = KafkaErrorFromCode(c.code);
  EXPECT_EQ(error.code, c.code);
  EXPECT_EQ(error.name, rd_kafka_err2name(c.code));
  EXPECT_EQ(error.retriable, c.retriable) << Name(c);
  EXPECT_EQ(error.txn_requires_abort, c.abortable) << Name(c);
  EXPECT_EQ(error.fatal, c.fatal) << Name(c);
}

constexpr auto kRetry = TxnAction::kRetry;
constexpr auto kAbort = TxnAction::kAbortAndRerun;
constexpr auto kGiveUp = TxnAction::kGiveUp;
using SC = absl::StatusCode;

INSTANTIATE_TEST_SUITE_P(
    EveryTransactionalErrorCode, TxnErrorTest,
    ::testing::Values(
        // Retriable: timeouts, coordinator moves, concurrent calls.
        TxnCase{"init/commit/abort", RD_KAFKA_RESP_ERR__TIMED_OUT, true, false,
                false, kRetry, SC::kDeadlineExceeded},
        TxnCase{"send_offsets", RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE, true, false,
                false, kRetry, SC::kDeadlineExceeded},
        TxnCase{"send_offsets", RD_KAFKA_RESP_ERR__TRANSPORT, true, false,
                false, kRetry, SC::kUnavailable},
        TxnCase{"init", RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true,
                false, false, kRetry, SC::kUnavailable},
        TxnCase{"init", RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, false, false,
                kRetry, SC::kUnavailable},
        TxnCase{"init", RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true,
                false, false, kRetry, SC::kUnavailable},
        TxnCase{"init", RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS, true, false,
                false, kRetry, SC::kUnavailable},
        TxnCase{"send_offsets", RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, true,
                false, false, kRetry, SC::kDeadlineExceeded},
        TxnCase{"send_offsets", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, true,
                false, false, kRetry, SC::kUnavailable},
        TxnCase{"any (another call in progress)", RD_KAFKA_RESP_ERR__CONFLICT,
                true, false, false, kRetry, SC::kUnavailable},
        TxnCase{"any (same call in another thread)",
                RD_KAFKA_RESP_ERR__PREV_IN_PROGRESS, true, false, false, kRetry,
                SC::kUnavailable},
        // Abortable: the transaction failed, a new one may succeed.
        TxnCase{"commit (a record failed delivery)",
                RD_KAFKA_RESP_ERR__INCONSISTENT, false, true, false, kAbort,
                SC::kAborted},
        TxnCase{"commit (delivery timed out)", RD_KAFKA_RESP_ERR__MSG_TIMED_OUT,
                false, true, false, kAbort, SC::kDeadlineExceeded},
        TxnCase{"commit/abort", RD_KAFKA_RESP_ERR_UNKNOWN_PRODUCER_ID, false,
                true, false, kAbort, SC::kAborted},
        TxnCase{"commit/abort", RD_KAFKA_RESP_ERR_INVALID_PRODUCER_ID_MAPPING,
                false, true, false, kAbort, SC::kAborted},
        TxnCase{"commit", RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, false,
                true, false, kAbort, SC::kAborted},
        TxnCase{"send/commit", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                false, true, false, kAbort, SC::kAborted},
        TxnCase{"send_offsets", RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED,
                false, true, false, kAbort, SC::kAborted},
        TxnCase{"send_offsets (zombie)", RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION,
                false, true, false, kAbort, SC::kAborted},
        TxnCase{"send_offsets (zombie)", RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID,
                false, true, false, kAbort, SC::kAborted},
        TxnCase{"commit", RD_KAFKA_RESP_ERR_OPERATION_NOT_ATTEMPTED, false,
                true, false, kAbort, SC::kAborted},
        // Fatal: this producer instance cannot go on.
        TxnCase{"any (fenced by a newer instance)", RD_KAFKA_RESP_ERR__FENCED,
                false, false, true, kGiveUp, SC::kFailedPrecondition, true},
        TxnCase{"any (fenced)", RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, false,
                true, kGiveUp, SC::kFailedPrecondition, true},
        TxnCase{"any (fenced, old protocol)",
                RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, false, false, true,
                kGiveUp, SC::kFailedPrecondition, true},
        TxnCase{"any", RD_KAFKA_RESP_ERR__FATAL, false, false, true, kGiveUp,
                SC::kInternal},
        TxnCase{"any", RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                false, false, true, kGiveUp, SC::kPermissionDenied},
        TxnCase{"any", RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED, false,
                false, true, kGiveUp, SC::kPermissionDenied},
        TxnCase{"commit/abort", RD_KAFKA_RESP_ERR_INVALID_TXN_STATE, false,
                false, true, kGiveUp, SC::kFailedPrecondition},
        TxnCase{"init", RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT, false,
                false, true, kGiveUp, SC::kInvalidArgument},
        TxnCase{"send", RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT, false,
                false, true, kGiveUp, SC::kUnimplemented},
        // Neither flag: librdkafka says treat as fatal; the SDK gives up.
        TxnCase{"begin/commit (wrong state)", RD_KAFKA_RESP_ERR__STATE, false,
                false, false, kGiveUp, SC::kFailedPrecondition},
        TxnCase{"any (no transactional.id)", RD_KAFKA_RESP_ERR__NOT_CONFIGURED,
                false, false, false, kGiveUp, SC::kFailedPrecondition},
        TxnCase{"any (bad argument)", RD_KAFKA_RESP_ERR__INVALID_ARG, false,
                false, false, kGiveUp, SC::kInvalidArgument},
        TxnCase{"init (broker too old)", RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE,
                false, false, false, kGiveUp, SC::kUnimplemented},
        TxnCase{"any (terminating)", RD_KAFKA_RESP_ERR__DESTROY, false, false,
                false, kGiveUp, SC::kCancelled}));

// librdkafka's unsupported-feature error on init is fatal: its flags win.
TEST(TxnErrorTest, FatalFlagWinsOverTheCode) {
  KafkaError error = KafkaErrorFromCode(RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE);
  error.fatal = true;
  absl::Status s = MakeKafkaStatus(error, "init_transactions");
  EXPECT_EQ(NextTxnAction(s), TxnAction::kGiveUp);
  EXPECT_TRUE(IsFatal(s));
  EXPECT_FALSE(IsFenced(s));
}

TEST(TxnErrorTest, AbortableWinsOverRetriable) {
  KafkaError error = KafkaErrorFromCode(RD_KAFKA_RESP_ERR__TIMED_OUT);
  error.txn_requires_abort = true;  // send_offsets timed out for good
  EXPECT_EQ(NextTxnAction(MakeKafkaStatus(error, "x")),
            TxnAction::kAbortAndRerun);
}

TEST(DeliveryErrorTest, QueueFullIsRetriableResourceExhausted) {
  absl::Status s = MakeKafkaStatus(
      KafkaErrorFromCode(RD_KAFKA_RESP_ERR__QUEUE_FULL), "send");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(IsRetriable(s));
  EXPECT_EQ(KafkaErrorName(s), "_QUEUE_FULL");
}

TEST(DeliveryErrorTest, PurgedRecordsAreCancelled) {
  for (auto code :
       {RD_KAFKA_RESP_ERR__PURGE_QUEUE, RD_KAFKA_RESP_ERR__PURGE_INFLIGHT}) {
    absl::Status s = MakeKafkaStatus(KafkaErrorFromCode(code), "delivery");
    EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
    EXPECT_EQ(NextTxnAction(s), TxnAction::kGiveUp);
  }
}

TEST(DeliveryErrorTest, RecordTooLargeIsInvalidArgument) {
  absl::Status s = MakeKafkaStatus(
      KafkaErrorFromCode(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE), "delivery");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(IsRetriable(s));
}

// The adapter over rd_kafka_error_t keeps code, name and message (the
// integration tests see it keep librdkafka's flags on real errors).
TEST(RdKafkaErrorTest, ErrorObjectBecomesAStatus) {
  rd_kafka_error_t* error =
      rd_kafka_error_new(RD_KAFKA_RESP_ERR__STATE, "Operation not valid");
  absl::Status s = internal::TakeError(error, "begin_transaction");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(KafkaErrorName(s), "_STATE");
  EXPECT_THAT(s.message(), HasSubstr("begin_transaction"));
  EXPECT_THAT(s.message(), HasSubstr("Operation not valid"));
  EXPECT_TRUE(internal::TakeError(nullptr, "x").ok());
}

TEST(RdKafkaErrorTest, BareCodeBecomesAStatus) {
  absl::Status s =
      internal::StatusFromCode(RD_KAFKA_RESP_ERR_NOT_COORDINATOR, "commit");
  EXPECT_TRUE(IsRetriable(s));
  EXPECT_EQ(KafkaErrorName(s), "NOT_COORDINATOR");
  EXPECT_TRUE(internal::StatusFromCode(RD_KAFKA_RESP_ERR_NO_ERROR, "x").ok());
}

TEST(RdKafkaErrorTest, WithContextKeepsThePayload) {
  absl::Status s = internal::WithContext(
      MakeKafkaStatus(KafkaErrorFromCode(RD_KAFKA_RESP_ERR__FENCED), "m"),
      "ctx");
  EXPECT_EQ(s.message(), "ctx: m");
  EXPECT_TRUE(IsFenced(s));
}

TEST(CallbackGuardTest, ExceptionsBecomeStatuses) {
  absl::Status s = internal::CallUser("my callback",
                                      [] { throw std::runtime_error("boom"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("my callback threw"));
  EXPECT_THAT(s.message(), HasSubstr("boom"));
  s = internal::CallUser("cb", [] { throw 42; });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(internal::CallUser("cb", [] {}).ok());
}

TEST(CallbackGuardTest, ReportErrorSurvivesAThrowingHandler) {
  int calls = 0;
  ErrorCallback handler = [&](const absl::Status&) {
    ++calls;
    throw std::runtime_error("handler broke");
  };
  internal::ReportError(handler, absl::InternalError("x"));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace exactly
