// The idempotent producer: each record is written once and in order per
// partition, even when librdkafka retries. Delivery reports are delivered by
// the SDK's own thread; the application never has to poll.
#ifndef EXACTLY_PRODUCER_H_
#define EXACTLY_PRODUCER_H_

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/options.h"
#include "exactly/record.h"

namespace exactly {

namespace internal {
class ProducerCore;
class ProducerAccess;
}  // namespace internal

inline constexpr std::chrono::milliseconds kDefaultCloseTimeout{30000};

struct ProducerStats {
  uint64_t delivered = 0;        // reports with an OK status
  uint64_t failed = 0;           // reports with an error
  uint64_t in_flight = 0;        // sent, not yet reported
  uint64_t callback_errors = 0;  // exceptions thrown by delivery callbacks
  // Records accepted by Send (queued in librdkafka; each is then reported
  // once, as delivered or failed). Of this librdkafka instance: a
  // TransactionalProducer's Rebuild() or new epoch starts it afresh.
  uint64_t sent = 0;
};

// Send, Flush and stats are safe to call from several threads. Close (and
// the destructor) must not race with them, nor run inside a delivery
// callback.
class Producer {
 public:
  // Refuses an options.transactional_id: use TransactionalProducer.
  static absl::StatusOr<std::unique_ptr<Producer>> Create(
      const ProducerOptions& options);
  ~Producer();  // Close(kDefaultCloseTimeout)

  // Queues `record`; its report goes to options.on_delivery (or, if unset, a
  // failure is returned by the next Flush()). An error here means the record
  // was not queued and will not be reported.
  absl::Status Send(const Record& record);
  // Queues `record`; `on_delivery` runs once with its report.
  absl::Status Send(const Record& record, DeliveryCallback on_delivery);
  // Queues `record`; the future holds where it landed, or why it failed
  // (including failing to queue).
  std::future<absl::StatusOr<RecordMetadata>> SendWithFuture(
      const Record& record);

  // Waits until every record sent so far is reported. DEADLINE_EXCEEDED if
  // some are still in flight; otherwise the failures of records that had no
  // callback and no on_delivery, since the last Flush.
  absl::Status Flush(std::chrono::milliseconds timeout);

  // Flushes for up to `timeout`, fails what is still queued (its callbacks
  // run with CANCELLED), and stops. Later calls return OK.
  absl::Status Close(std::chrono::milliseconds timeout = kDefaultCloseTimeout);

  ProducerStats stats() const;

 private:
  friend class internal::ProducerAccess;
  explicit Producer(std::unique_ptr<internal::ProducerCore> core);

  std::unique_ptr<internal::ProducerCore> core_;
};

}  // namespace exactly

#endif  // EXACTLY_PRODUCER_H_
