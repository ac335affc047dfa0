// What the idempotent and the transactional producer share: the librdkafka
// handle, its delivery thread, and the lean Send path.
#ifndef EXACTLY_SDK_SRC_PRODUCER_PRODUCER_CORE_H_
#define EXACTLY_SDK_SRC_PRODUCER_PRODUCER_CORE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/rdkafka_util.h"
#include "exactly/options.h"
#include "exactly/producer.h"
#include "exactly/record.h"
#include "producer/delivery_dispatcher.h"

namespace exactly::internal {

class ProducerCore {
 public:
  static absl::StatusOr<std::unique_ptr<ProducerCore>> Create(
      const ProducerOptions& options);
  ~ProducerCore();

  // Queues `record`. On success the core owns `pending` (may be null) and
  // completes it exactly once; on failure the caller keeps it.
  absl::Status Send(const Record& record, PendingDelivery* pending);
  absl::Status Flush(std::chrono::milliseconds timeout);
  absl::Status Close(std::chrono::milliseconds timeout);

  // Runs `wait`, a librdkafka call that blocks until every delivery report is
  // finished with (commit_transaction, abort_transaction).
  template <typename Fn>
  auto Draining(Fn&& wait) {
    DeliveryDispatcher::Drain drain(dispatcher_.get());
    return wait();
  }

  // Frees, on the calling thread, the delivery reports the delivery thread
  // has finished with (see DeliveryDispatcher). For code that produces on
  // rk() directly instead of through Send.
  void ReleaseFinishedReports() {
    if (dispatcher_ != nullptr) dispatcher_->ReleaseFinished();
  }

  // See DeliveryDispatcher::failures_after_send().
  uint64_t failures_after_send() const {
    return dispatcher_ != nullptr ? dispatcher_->failures_after_send() : 0;
  }

  // Counts `n` records queued on rk() directly (not through Send).
  void CountSent(uint64_t n) { sent_.fetch_add(n, std::memory_order_relaxed); }

  // `status` of a call that failed while the broker refused this client's
  // credentials or TLS handshake: a PERMISSION_DENIED status that says so
  // (not retriable: the same credentials fail again). Otherwise `status`.
  absl::Status ExplainAuthenticationFailure(absl::Status status) const;

  rd_kafka_t* rk() const { return rk_.get(); }
  const ProducerOptions& options() const { return options_; }
  ProducerStats stats() const;

 private:
  ProducerCore(const ProducerOptions& options, HandlePtr rk);

  const ProducerOptions options_;
  HandlePtr rk_;
  std::unique_ptr<DeliveryDispatcher> dispatcher_;  // stops before rk_ goes
  bool closed_ = false;
  std::atomic<uint64_t> sent_{0};  // records queued (ProducerStats::sent)
};

// A PendingDelivery that runs a callback.
class CallbackDelivery final : public PendingDelivery {
 public:
  explicit CallbackDelivery(DeliveryCallback callback)
      : callback_(std::move(callback)) {}
  void Complete(const DeliveryReport& report) override { callback_(report); }

 private:
  DeliveryCallback callback_;
};

// A PendingDelivery that fulfils a future.
class PromiseDelivery final : public PendingDelivery {
 public:
  std::future<absl::StatusOr<RecordMetadata>> future() {
    return promise_.get_future();
  }
  void Fail(const absl::Status& status) { promise_.set_value(status); }
  void Complete(const DeliveryReport& report) override;

 private:
  std::promise<absl::StatusOr<RecordMetadata>> promise_;
};

}  // namespace exactly::internal

#endif  // EXACTLY_SDK_SRC_PRODUCER_PRODUCER_CORE_H_
