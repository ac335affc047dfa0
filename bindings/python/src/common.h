// What every part of the extension shares: statuses as Python exceptions,
// Python bytes/str as views, deadlines, and waiting with the GIL released
// while staying interruptible by Ctrl-C.
//
// The rule for blocking calls: release the GIL, block for at most a short
// slice, take the GIL back, run the callbacks queued for this thread, check
// for signals (PyErr_CheckSignals raises KeyboardInterrupt), and go on. A
// signal therefore interrupts any wait within one slice.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_COMMON_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_COMMON_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/record.h"

namespace exactly::python {

namespace py = pybind11;

using Clock = std::chrono::steady_clock;

// How long a blocking call waits, with the GIL released, before it checks
// for signals and runs queued callbacks.
inline constexpr std::chrono::milliseconds kSlice{50};
// The per-call timeout of the transactional verbs: librdkafka resumes a call
// that timed out when it is made again.
inline constexpr std::chrono::milliseconds kTxnSlice{100};

// ---- Errors ---------------------------------------------------------------

// The Python exception (an exactly.Error subclass) for a non-OK status.
py::object ErrorObject(const absl::Status& status);
// None for OK, else ErrorObject(status).
py::object ErrorOrNone(const absl::Status& status);
// Raises ErrorObject(status) as the current Python exception.
[[noreturn]] void ThrowStatus(const absl::Status& status);

inline void Check(const absl::Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

template <typename T>
T Take(absl::StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(value.status());
  return std::move(*value);
}

// Raises KeyboardInterrupt (or whatever a signal handler raised) if a
// signal arrived. Needs the GIL.
inline void CheckSignals() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// ---- Deadlines --------------------------------------------------------------

class Deadline {
 public:
  // None (or a negative number) waits without limit.
  static Deadline After(std::optional<double> seconds);
  static Deadline Never() { return Deadline(std::nullopt); }

  bool expired() const { return at_.has_value() && Clock::now() >= *at_; }
  bool infinite() const { return !at_.has_value(); }
  // min(time left, `slice`), never negative.
  std::chrono::milliseconds Slice(
      std::chrono::milliseconds slice = kSlice) const;
  // Time left (a large value when infinite).
  std::chrono::milliseconds Left() const;

 private:
  explicit Deadline(std::optional<Clock::time_point> at) : at_(at) {}
  std::optional<Clock::time_point> at_;
};

// Sleeps for `duration` with the GIL released, in slices, checking for
// signals between them.
void InterruptibleSleep(std::chrono::milliseconds duration);

// ---- Keys, values, topics -------------------------------------------------

// A bytes-like or str argument seen as bytes without copying: bytes and str
// (UTF-8) directly, anything else with the buffer protocol (held until this
// view is destroyed, which also keeps a bytearray from being resized). None
// gives a null view (data() == nullptr), which the SDK sends as null.
class BytesView {
 public:
  BytesView() = default;
  BytesView(py::handle object, const char* what) { Set(object, what); }
  BytesView(const BytesView&) = delete;
  BytesView& operator=(const BytesView&) = delete;
  BytesView(BytesView&& other) noexcept;
  BytesView& operator=(BytesView&& other) noexcept;
  ~BytesView() { Release(); }

  void Set(py::handle object, const char* what);
  std::string_view view() const { return view_; }

 private:
  void Release();
  std::string_view view_;
  Py_buffer buffer_{};
  bool has_buffer_ = false;
};

// The fast path for the common cases, no buffer export: false if `object` is
// neither None, bytes nor str (then use BytesView).
inline bool FastView(PyObject* object, std::string_view* out) {
  if (object == Py_None) {
    *out = std::string_view();
    return true;
  }
  if (PyBytes_CheckExact(object)) {
    *out = std::string_view(PyBytes_AS_STRING(object),
                            static_cast<size_t>(PyBytes_GET_SIZE(object)));
    return true;
  }
  if (PyUnicode_CheckExact(object)) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(object, &size);
    if (data == nullptr) throw py::error_already_set();
    *out = std::string_view(data, static_cast<size_t>(size));
    return true;
  }
  return false;
}

// A topic name: str (or bytes).
std::string_view TopicView(py::handle topic);

// Record headers from a list of (key, value) pairs or a dict; the views
// point into `holders`, which must outlive them.
void ParseHeaders(py::handle headers, std::vector<BytesView>* holders,
                  std::vector<Header>* out);

// Python bytes from a view; None for a null view when `has` is false.
py::object BytesOrNone(std::string_view data, bool has);

// ---- Offsets ----------------------------------------------------------------

// A list of (topic, partition, offset) tuples (or objects with those
// attributes, such as exactly.TopicPartitionOffset).
std::vector<TopicPartitionOffset> ToOffsets(py::handle offsets);
// As exactly.TopicPartitionOffset / exactly.TopicPartition named tuples.
py::list FromOffsets(const std::vector<TopicPartitionOffset>& offsets);
py::list FromPartitions(const std::vector<TopicPartition>& partitions);

// An attribute of the pure-Python part of the package (exactly.<module>).
py::object PackageAttr(const char* module, const char* name);

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_COMMON_H_
