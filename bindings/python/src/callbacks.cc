#include "callbacks.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "natives.h"

namespace exactly::python {

CallbackQueue::~CallbackQueue() {
  if (const int fd = wake_fd_.load(); fd >= 0) close(fd);
  bool has_callbacks = false;
  for (const QueuedCall& call : calls_)
    has_callbacks |= call.callback != nullptr;
  if (!has_callbacks || Py_IsInitialized() == 0 || _Py_IsFinalizing()) return;
  py::gil_scoped_acquire gil;
  for (QueuedCall& call : calls_) Py_XDECREF(call.callback);
}

void CallbackQueue::Push(QueuedCall call) {
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_empty = calls_.empty();
    calls_.push_back(std::move(call));
    size_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  if (!was_empty) return;
  // After the lock: the loop's drain may take the call at once; a wake-up
  // with nothing left to drain is harmless.
  if (const int fd = wake_fd_.load(std::memory_order_acquire); fd >= 0) {
    const uint64_t one = 1;
    // Fails only with EAGAIN (the counter is full, so already readable).
    [[maybe_unused]] const ssize_t n = write(fd, &one, sizeof(one));
  }
}

bool CallbackQueue::DrainForLoop(int max_calls, py::handle default_delivery,
                                 py::handle on_error) {
  ClearWake();
  Drain(default_delivery, on_error, max_calls);
  return !empty();
}

int CallbackQueue::WakeFd() {
  std::lock_guard<std::mutex> lock(mu_);
  int fd = wake_fd_.load();
  if (fd >= 0) return fd;
  fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    PyErr_SetFromErrno(PyExc_OSError);
    throw py::error_already_set();
  }
  wake_fd_.store(fd, std::memory_order_release);
  // Calls queued before the descriptor existed: signal them now.
  if (!calls_.empty()) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(fd, &one, sizeof(one));
  }
  return fd;
}

void CallbackQueue::ClearWake() {
  const int fd = wake_fd_.load(std::memory_order_acquire);
  if (fd < 0) return;
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = read(fd, &count, sizeof(count));
}

void CallbackQueue::PushReport(PyObject* callback,
                               const DeliveryReport& report) {
  QueuedCall call;
  call.callback = callback;
  call.status = report.status;
  call.topic = std::string(report.topic);
  call.partition = report.partition;
  call.offset = report.offset;
  call.timestamp_ms = report.timestamp_ms;
  call.has_key = report.key.data() != nullptr;
  call.has_value = report.value.data() != nullptr;
  if (call.has_key) call.key = std::string(report.key);
  if (call.has_value) call.value = std::string(report.value);
  Push(std::move(call));
}

void CallbackQueue::PushError(const absl::Status& status) {
  QueuedCall call;
  call.kind = QueuedCall::Kind::kError;
  call.status = status;
  Push(std::move(call));
}

int CallbackQueue::Drain(py::handle default_delivery, py::handle on_error,
                         int max_calls) {
  int ran = 0;
  int taken = 0;
  while (!empty() && (max_calls < 0 || taken < max_calls)) {
    ++taken;
    QueuedCall call;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (calls_.empty()) break;
      call = std::move(calls_.front());
      calls_.pop_front();
      size_.fetch_sub(1, std::memory_order_release);
    }
    py::object own = call.callback != nullptr
                         ? py::reinterpret_steal<py::object>(call.callback)
                         : py::object();
    if (call.kind == QueuedCall::Kind::kResult) {
      if (!own) continue;
      ++ran;
      own(ErrorOrNone(call.status));
    } else if (call.kind == QueuedCall::Kind::kError) {
      py::handle target = own ? py::handle(own) : on_error;
      if (!target || target.is_none()) continue;
      ++ran;
      target(ErrorObject(call.status));
    } else {
      py::handle target = own ? py::handle(own) : default_delivery;
      if (!target || target.is_none()) continue;
      ++ran;
      target(ErrorOrNone(call.status), MakeDeliveryReport(call));
    }
  }
  return ran;
}

void CallbackQueue::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !calls_.empty(); });
}

py::object MakeDeliveryReport(const QueuedCall& call) {
  PyDeliveryReport report;
  report.topic = call.topic;
  report.partition = call.partition;
  report.offset = call.offset;
  report.timestamp_ms = call.timestamp_ms;
  report.key = BytesOrNone(call.key, call.has_key);
  report.value = BytesOrNone(call.value, call.has_value);
  return py::cast(std::move(report));
}

}  // namespace exactly::python
