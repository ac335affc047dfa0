#include "producer/delivery_dispatcher.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/callback_guard.h"

namespace exactly::internal {

DeliveryDispatcher::DeliveryDispatcher(rd_kafka_t* rk,
                                       DeliveryCallback default_callback,
                                       ErrorCallback on_error,
                                       StatisticsCallback on_statistics,
                                       bool keep_unreported_failures)
    : rk_(rk),
      queue_(rd_kafka_queue_get_main(rk)),
      default_callback_(std::move(default_callback)),
      on_error_(std::move(on_error)),
      on_statistics_(std::move(on_statistics)),
      keep_unreported_failures_(keep_unreported_failures),
      thread_([this] { Run(); }) {}

DeliveryDispatcher::~DeliveryDispatcher() { Stop(); }

void DeliveryDispatcher::Stop() {
  stopping_.store(true);
  // The yield makes the thread's next (or current) poll return at once.
  rd_kafka_queue_yield(queue_.get());
  if (thread_.joinable()) thread_.join();
  ReleaseFinishedSlow();
}

namespace {

// A failed record whose sequence numbers the broker may have seen: it may
// have been written (its response lost), or the broker refused its batch.
// Only records purged before they were ever sent (an abort's queue purge,
// status NOT_PERSISTED) leave librdkafka's numbering and the broker's in step.
bool FailedAfterSend(const rd_kafka_message_t& m) {
  if (rd_kafka_message_status(&m) == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED) {
    return true;
  }
  return m.err != RD_KAFKA_RESP_ERR__PURGE_QUEUE &&
         m.err != RD_KAFKA_RESP_ERR__PURGE_INFLIGHT;
}
// How long a finished report may wait for the sending thread.
constexpr auto kMaxHold = std::chrono::milliseconds(1);
}  // namespace

void DeliveryDispatcher::Run() {
  for (;;) {
    // With reports held, wake within kMaxHold to release them if the sender
    // has gone quiet.
    const int timeout_ms =
        finished_count_.load(std::memory_order_acquire) != 0 ? 1 : 1000;
    rd_kafka_event_t* event = rd_kafka_queue_poll(queue_.get(), timeout_ms);
    if (event == nullptr) {
      ReleaseFinishedSlow();
      if (!stopping_.load()) continue;
      // Stopping: hand out whatever is already queued, then leave.
      while ((event = rd_kafka_queue_poll(queue_.get(), 0)) != nullptr) {
        Handle(event);
        rd_kafka_event_destroy(event);
      }
      return;
    }
    Handle(event);
    Finish(event);
  }
}

void DeliveryDispatcher::Finish(rd_kafka_event_t* event) {
  const bool waited_for = drains_.load(std::memory_order_acquire) > 0 ||
                          room_waiters_.load(std::memory_order_acquire) > 0 ||
                          stopping_.load();
  if (!waited_for) {
    std::lock_guard<std::mutex> lock(finished_mu_);
    const auto now = std::chrono::steady_clock::now();
    if (finished_.empty()) oldest_finished_ = now;
    finished_.push_back(event);
    finished_count_.store(finished_.size(), std::memory_order_release);
    if (now - oldest_finished_ < kMaxHold) return;
  } else {
    // Destroying the event releases its records from librdkafka's queue
    // accounting: that is what flush() and a blocked Send() wait for.
    rd_kafka_event_destroy(event);
  }
  ReleaseFinishedSlow();
  if (room_waiters_.load(std::memory_order_acquire) > 0) {
    std::lock_guard<std::mutex> lock(room_mu_);
    room_cv_.notify_all();
  }
}

size_t DeliveryDispatcher::ReleaseFinishedSlow() {
  std::vector<rd_kafka_event_t*> done;
  {
    std::lock_guard<std::mutex> lock(finished_mu_);
    done.swap(finished_);
    finished_count_.store(0, std::memory_order_release);
  }
  for (rd_kafka_event_t* e : done) rd_kafka_event_destroy(e);
  return done.size();
}

DeliveryDispatcher::Drain::Drain(DeliveryDispatcher* d) : d_(d) {
  d_->drains_.fetch_add(1, std::memory_order_acq_rel);
  d_->ReleaseFinishedSlow();
}

DeliveryDispatcher::Drain::~Drain() {
  d_->drains_.fetch_sub(1, std::memory_order_acq_rel);
}

void DeliveryDispatcher::Handle(rd_kafka_event_t* event) {
  switch (rd_kafka_event_type(event)) {
    case RD_KAFKA_EVENT_DR: {
      // Counted once per event (one per produce response), not per record.
      uint64_t delivered = 0;
      uint64_t failed = 0;
      uint64_t failed_after_send = 0;
      while (const rd_kafka_message_t* m = rd_kafka_event_message_next(event)) {
        const bool ok = m->err == RD_KAFKA_RESP_ERR_NO_ERROR;
        ++(ok ? delivered : failed);
        if (!ok && FailedAfterSend(*m)) ++failed_after_send;
        // A success nobody asked to hear about needs no report.
        if (ok && m->_private == nullptr && !default_callback_) continue;
        Deliver(*m);
      }
      if (delivered != 0) {
        delivered_.fetch_add(delivered, std::memory_order_relaxed);
      }
      if (failed != 0) failed_.fetch_add(failed, std::memory_order_relaxed);
      if (failed_after_send != 0) {
        failures_after_send_.fetch_add(failed_after_send,
                                       std::memory_order_release);
      }
      break;
    }
    case RD_KAFKA_EVENT_ERROR: {
      const rd_kafka_resp_err_t code = rd_kafka_event_error(event);
      if (code == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
          code == RD_KAFKA_RESP_ERR__SSL) {
        std::lock_guard<std::mutex> lock(authentication_mu_);
        authentication_failure_ = rd_kafka_event_error_string(event);
      }
      if (rd_kafka_event_error_is_fatal(event)) {
        ReportError(on_error_, FatalStatus(rk_));
      } else if (on_error_) {
        // librdkafka logs these itself and recovers; pass them on only to
        // an application that asked.
        ReportError(on_error_,
                    StatusFromCode(rd_kafka_event_error(event),
                                   rd_kafka_event_error_string(event)));
      }
      break;
    }
    case RD_KAFKA_EVENT_STATS: {
      if (!on_statistics_) break;
      const char* json = rd_kafka_event_stats(event);
      absl::Status thrown = CallUser("statistics callback", [&] {
        on_statistics_(json != nullptr ? std::string_view(json)
                                       : std::string_view());
      });
      if (!thrown.ok()) ReportError(on_error_, thrown);
      break;
    }
    default:
      break;
  }
}

std::string DeliveryDispatcher::authentication_failure() const {
  std::lock_guard<std::mutex> lock(authentication_mu_);
  return authentication_failure_;
}

void DeliveryDispatcher::Deliver(const rd_kafka_message_t& m) {
  DeliveryReport report;
  if (m.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    report.status = StatusFromCode(
        m.err, absl::StrCat("delivery to ", rd_kafka_topic_name(m.rkt)), rk_);
  }
  report.topic = rd_kafka_topic_name(m.rkt);
  report.partition = m.partition;
  report.offset = m.offset;
  report.timestamp_ms = rd_kafka_message_timestamp(&m, nullptr);
  if (m.key != nullptr) {
    report.key = std::string_view(static_cast<const char*>(m.key), m.key_len);
  }
  if (m.payload != nullptr) {
    report.value = std::string_view(static_cast<const char*>(m.payload), m.len);
  }

  absl::Status thrown;
  if (auto* pending = static_cast<PendingDelivery*>(m._private)) {
    thrown = CallUser("delivery callback", [&] { pending->Complete(report); });
    delete pending;
  } else if (default_callback_) {
    thrown = CallUser("on_delivery", [&] { default_callback_(report); });
  } else if (!report.status.ok() && keep_unreported_failures_) {
    std::lock_guard<std::mutex> lock(failures_mu_);
    if (unreported_failures_++ == 0) first_unreported_ = report.status;
  }
  if (!thrown.ok()) {
    callback_errors_.fetch_add(1, std::memory_order_relaxed);
    ReportError(on_error_, thrown);
  }
}

void DeliveryDispatcher::WaitForRoom(
    std::chrono::steady_clock::time_point deadline) {
  // Bounded wait: a report that lands between the failed produce and this
  // wait does not notify us, so never sleep long on one wake-up.
  const auto until = std::min(deadline, std::chrono::steady_clock::now() +
                                            std::chrono::milliseconds(5));
  // Reports handed back to us free room at once.
  if (finished_count_.load(std::memory_order_acquire) != 0 &&
      ReleaseFinishedSlow() > 0) {
    return;
  }
  std::unique_lock<std::mutex> lock(room_mu_);
  room_waiters_.fetch_add(1, std::memory_order_acq_rel);
  room_cv_.wait_until(lock, until);
  room_waiters_.fetch_sub(1, std::memory_order_acq_rel);
}

absl::Status DeliveryDispatcher::TakeUnreportedFailures() {
  std::lock_guard<std::mutex> lock(failures_mu_);
  if (unreported_failures_ == 0) return absl::OkStatus();
  absl::Status out(first_unreported_.code(),
                   absl::StrCat(unreported_failures_,
                                " record(s) without a delivery callback "
                                "failed; the first: ",
                                first_unreported_.message()));
  first_unreported_.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) {
        out.SetPayload(url, payload);
      });
  unreported_failures_ = 0;
  first_unreported_ = absl::OkStatus();
  return out;
}

}  // namespace exactly::internal
