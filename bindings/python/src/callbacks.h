// Callbacks run on the caller's thread. The SDK reports deliveries and
// background errors on its own threads; those threads never touch Python.
// They push what happened onto a CallbackQueue, and the thread that next
// calls into the client (send, poll, flush, close, a future's result, ...)
// runs the Python callbacks, holding the GIL, in the order they were queued.
// For an event loop (exactly.aio) a queue can also signal a file descriptor
// when a call is queued, so the loop drains it on its own thread.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_CALLBACKS_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_CALLBACKS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "common.h"
#include "exactly/record.h"

namespace exactly::python {

// One queued call: a delivery report, a background error, or the result of
// an asynchronous call (e.g. a commit).
struct QueuedCall {
  enum class Kind {
    kDelivery,  // callback(error or None, DeliveryReport)
    kError,     // callback(error); no callback: on_error
    kResult,    // callback(error or None)
  };
  Kind kind = Kind::kDelivery;
  // The record's own callback, a strong reference taken on the caller's
  // thread (the queue's consumer drops it, with the GIL). Null: the client's
  // default on_delivery (a report) or on_error (an error).
  PyObject* callback = nullptr;
  absl::Status status;
  std::string topic;
  int32_t partition = kAnyPartition;
  int64_t offset = kOffsetInvalid;
  int64_t timestamp_ms = 0;
  std::string key;
  std::string value;
  bool has_key = false;
  bool has_value = false;
};

class CallbackQueue {
 public:
  CallbackQueue() = default;
  CallbackQueue(const CallbackQueue&) = delete;
  CallbackQueue& operator=(const CallbackQueue&) = delete;
  // Drops (without calling) what is left; needs the GIL if anything is.
  // Closes the wake-up descriptor, if any.
  ~CallbackQueue();

  // Any thread, GIL not needed.
  void Push(QueuedCall call);
  void PushReport(PyObject* callback, const DeliveryReport& report);
  void PushError(const absl::Status& status);

  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }

  // With the GIL: runs every queued call, oldest first, with
  // `default_delivery` for reports without their own callback and `on_error`
  // for errors (either may be None: such calls are dropped). A callback that
  // raises stops the drain; the exception propagates and the rest stay
  // queued. Returns the number of calls run.
  // At most `max_calls` when not negative (then some may stay queued).
  int Drain(py::handle default_delivery, py::handle on_error,
            int max_calls = -1);

  // The wake-up descriptor (an eventfd, non-blocking, created on the first
  // call): readable from when a call is queued onto an empty queue until
  // ClearWake(). Raises OSError if it cannot be created.
  int WakeFd();
  // Resets the descriptor; call before draining, so that a call queued
  // after the drain emptied the queue signals it again.
  void ClearWake();
  // With the GIL, for the loop's reader: ClearWake(), then Drain() up to
  // `max_calls`. True if calls are left (the loop schedules another drain).
  bool DrainForLoop(int max_calls, py::handle default_delivery,
                    py::handle on_error);

  // Without the GIL: waits up to `timeout` for a call to be queued.
  void Wait(std::chrono::milliseconds timeout);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<QueuedCall> calls_;
  std::atomic<size_t> size_{0};
  std::atomic<int> wake_fd_{-1};
};

// exactly.DeliveryReport for a queued report.
py::object MakeDeliveryReport(const QueuedCall& call);

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_CALLBACKS_H_
