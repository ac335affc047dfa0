// Delivery reports reach the application without it polling: one thread per
// producer polls librdkafka's main queue (delivery reports are enabled as
// events, so rd_kafka_flush() and commit_transaction() wait for this thread
// to finish with them) and runs each record's handler.
//
// Who frees a report's records matters for speed: librdkafka allocates them on
// the thread that sends, and glibc serves a thread's allocations fast only
// from what that same thread freed. So a finished report is handed back to the
// sending thread, which destroys it on its next Send (ReleaseFinished). The
// delivery thread destroys reports itself when nobody picks them up within a
// millisecond, and at once while someone waits for them (a Drain: flush,
// commit, abort, a full queue).
#ifndef EXACTLY_SDK_SRC_PRODUCER_DELIVERY_DISPATCHER_H_
#define EXACTLY_SDK_SRC_PRODUCER_DELIVERY_DISPATCHER_H_

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "client/rdkafka_util.h"
#include "exactly/record.h"

namespace exactly::internal {

// What a record's per-message opaque points to when the record has its own
// handler. Completed exactly once on the delivery thread, then deleted.
class PendingDelivery {
 public:
  virtual ~PendingDelivery() = default;
  virtual void Complete(const DeliveryReport& report) = 0;  // may throw
};

class DeliveryDispatcher {
 public:
  // Records without a PendingDelivery go to `default_callback`; when that is
  // unset, their failures are kept for TakeUnreportedFailures() if
  // `keep_unreported_failures` (a transactional producer learns of them from
  // the commit instead).
  // librdkafka's statistics events go to `on_statistics`.
  DeliveryDispatcher(rd_kafka_t* rk, DeliveryCallback default_callback,
                     ErrorCallback on_error, StatisticsCallback on_statistics,
                     bool keep_unreported_failures);
  DeliveryDispatcher(const DeliveryDispatcher&) = delete;
  DeliveryDispatcher& operator=(const DeliveryDispatcher&) = delete;
  ~DeliveryDispatcher();

  // Handles what is still queued, then joins the thread. Idempotent.
  void Stop();

  // Destroys the reports the delivery thread has finished with; called on the
  // sending thread. Cheap when there are none.
  void ReleaseFinished() {
    if (finished_count_.load(std::memory_order_acquire) != 0)
      ReleaseFinishedSlow();
  }

  // While a Drain lives, finished reports are destroyed at once: the caller
  // is about to block until librdkafka has none outstanding.
  class Drain {
   public:
    explicit Drain(DeliveryDispatcher* d);
    ~Drain();
    Drain(const Drain&) = delete;
    Drain& operator=(const Drain&) = delete;

   private:
    DeliveryDispatcher* d_;
  };

  // Blocks until a report has freed room in librdkafka's queue (or briefly,
  // in case the wake-up was missed), never past `deadline`.
  void WaitForRoom(std::chrono::steady_clock::time_point deadline);

  // Failures of records that had no handler since the last call, as one
  // status (OK if none).
  absl::Status TakeUnreportedFailures();

  uint64_t delivered() const { return delivered_.load(); }
  uint64_t failed() const { return failed_.load(); }
  // Records that failed after they were sent: possibly written (librdkafka's
  // RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED, e.g. purged by an abort while a
  // retry of theirs was queued) or refused by the broker. Either way the
  // broker's idea of the producer's next sequence number may differ from
  // librdkafka's. Counted before the report is released, so a flush, commit
  // or abort that returned has seen every one of them.
  uint64_t failures_after_send() const {
    return failures_after_send_.load(std::memory_order_acquire);
  }
  uint64_t callback_errors() const { return callback_errors_.load(); }
  // The last time the broker refused this client's credentials (SASL) or TLS
  // handshake, in librdkafka's words; empty if it never did. librdkafka
  // keeps reconnecting after one, so a call that then times out is told why.
  std::string authentication_failure() const;

 private:
  void Run();
  size_t ReleaseFinishedSlow();  // how many it destroyed
  // Hands `event` back to the sending thread, or destroys it when someone is
  // waiting or it has waited long enough.
  void Finish(rd_kafka_event_t* event);
  void Handle(rd_kafka_event_t* event);
  void Deliver(const rd_kafka_message_t& message);

  rd_kafka_t* const rk_;
  const QueuePtr queue_;
  const DeliveryCallback default_callback_;
  const ErrorCallback on_error_;
  const StatisticsCallback on_statistics_;
  const bool keep_unreported_failures_;

  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> failures_after_send_{0};
  std::atomic<uint64_t> callback_errors_{0};

  // Send() waits here when the queue is full; the thread only takes the
  // mutex when someone waits, so the common path stays lock-free.
  std::atomic<int> room_waiters_{0};
  std::mutex room_mu_;
  std::condition_variable room_cv_;

  mutable std::mutex authentication_mu_;
  std::string authentication_failure_;

  std::mutex failures_mu_;  // only taken on failures without a handler
  uint64_t unreported_failures_ = 0;
  absl::Status first_unreported_;

  // Finished reports waiting for the sending thread to destroy them.
  std::mutex finished_mu_;
  std::vector<rd_kafka_event_t*> finished_;
  std::chrono::steady_clock::time_point oldest_finished_;
  std::atomic<size_t> finished_count_{0};
  std::atomic<int> drains_{0};

  std::atomic<bool> stopping_{false};
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace exactly::internal

#endif  // EXACTLY_SDK_SRC_PRODUCER_DELIVERY_DISPATCHER_H_
