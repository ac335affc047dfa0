// Options for every client, with safe defaults. Any librdkafka property can
// be set in `properties` under its usual name ("linger.ms", "compression.type",
// ...); it overrides the SDK default of the same name. In exactly-once mode
// (the default, and always for transactions and the processor), Create()
// refuses a property that would break exactly-once and says which and why.
#ifndef EXACTLY_OPTIONS_H_
#define EXACTLY_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/record.h"

namespace exactly {

// What Create() enforces.
enum class Mode {
  // Refuse acks other than all, idempotence off, more than 5 requests in
  // flight, retries=0, auto-commit, read_uncommitted.
  kExactlyOnce,
  // Keep the safe defaults but let `properties` override them, for a caller
  // who knowingly trades safety (e.g. a best-effort metrics topic). Ignored by
  // TransactionalProducer and Processor.
  kUnchecked,
};

// What Send() does when librdkafka's local queue is full
// (queue.buffering.max.messages / queue.buffering.max.kbytes).
enum class QueueFullPolicy {
  kBlock,  // wait for room up to queue_full_timeout, then fail
  kFail,   // fail at once with RESOURCE_EXHAUSTED (Kafka error _QUEUE_FULL)
};

// How transactional calls are repeated, following librdkafka's rules.
struct RetryPolicy {
  int max_attempts = 5;  // runs of one transaction (abortable errors)
  int max_retries = 10;  // repeats of one call (retriable errors)
  std::chrono::milliseconds initial_backoff{100};  // doubles on each repeat
  std::chrono::milliseconds max_backoff{5000};
};

// For transaction_call_timeout: librdkafka's recommended -1, i.e. the time
// left before transaction.timeout.ms.
inline constexpr std::chrono::milliseconds kRemainingTransactionTime{-1};

struct ProducerOptions {
  std::string bootstrap_servers;  // "bootstrap.servers"
  std::string client_id;          // "client.id" (optional)
  std::string transactional_id;   // "transactional.id": TransactionalProducer
  std::map<std::string, std::string> properties;
  Mode mode = Mode::kExactlyOnce;
  QueueFullPolicy queue_full = QueueFullPolicy::kBlock;
  std::chrono::milliseconds queue_full_timeout{30000};
  // Per call of init/commit/abort/send_offsets; a timeout is retriable and
  // the next call resumes the operation.
  std::chrono::milliseconds transaction_call_timeout =
      kRemainingTransactionTime;
  RetryPolicy retry;
  // Delivery report for records sent without their own callback. When unset,
  // failures are counted and returned by the next Flush().
  DeliveryCallback on_delivery;
  ErrorCallback on_error;  // unset: fatal errors and callback exceptions
                           // are printed to stderr
  // librdkafka's statistics, on the delivery thread (see
  // StatisticsCallback; set "statistics.interval.ms" in `properties`).
  StatisticsCallback on_statistics;
};

struct ConsumerOptions {
  std::string bootstrap_servers;  // "bootstrap.servers"
  std::string group_id;           // "group.id" (required)
  std::string client_id;          // "client.id" (optional)
  std::map<std::string, std::string> properties;
  Mode mode = Mode::kExactlyOnce;
  ErrorCallback on_error;
  // librdkafka's statistics, inside Poll/PollBatch (see StatisticsCallback;
  // set "statistics.interval.ms" in `properties`).
  StatisticsCallback on_statistics;
};

struct ProcessorOptions {
  std::string bootstrap_servers;
  std::string group_id;                   // the input consumer group
  std::vector<std::string> input_topics;  // subscribed
  std::string transactional_id;           // the output producer
  // A batch (one transaction) ends at whichever comes first.
  size_t max_batch_records = 500;
  std::chrono::milliseconds max_batch_time{100};
  std::map<std::string, std::string> consumer_properties;
  std::map<std::string, std::string> producer_properties;
  RetryPolicy retry;
  ErrorCallback on_error;
  // librdkafka's statistics of both clients, the consumer's and the
  // producer's (the JSON's "type" says which; set "statistics.interval.ms"
  // in consumer_properties and/or producer_properties).
  StatisticsCallback on_statistics;
};

// Checks `options` without connecting: names the first property that is
// missing, conflicting or unsafe for the options' mode.
absl::Status Validate(const ProducerOptions& options);
absl::Status Validate(const ConsumerOptions& options);
absl::Status Validate(const ProcessorOptions& options);

// The librdkafka properties a client is created with: the SDK defaults,
// overridden by the options' fields and `properties`, after Validate().
absl::StatusOr<std::map<std::string, std::string>> LibrdkafkaProperties(
    const ProducerOptions& options);
absl::StatusOr<std::map<std::string, std::string>> LibrdkafkaProperties(
    const ConsumerOptions& options);

}  // namespace exactly

#endif  // EXACTLY_OPTIONS_H_
