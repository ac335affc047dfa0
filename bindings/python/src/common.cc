#include "common.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "exactly/error.h"

namespace exactly::python {

// ---- Errors ---------------------------------------------------------------

py::object PackageAttr(const char* module, const char* name) {
  return py::module_::import(module).attr(name);
}

py::object ErrorObject(const absl::Status& status) {
  py::object kafka = py::none();
  if (std::optional<KafkaError> error = GetKafkaError(status)) {
    kafka = py::make_tuple(error->code, error->name, error->retriable,
                           error->txn_requires_abort, error->fatal,
                           IsFenced(status));
  }
  return PackageAttr("exactly.errors", "_from_status")(
      absl::StatusCodeToString(status.code()), std::string(status.message()),
      kafka);
}

py::object ErrorOrNone(const absl::Status& status) {
  if (status.ok()) return py::none();
  return ErrorObject(status);
}

void ThrowStatus(const absl::Status& status) {
  py::object error = ErrorObject(status);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())),
                  error.ptr());
  throw py::error_already_set();
}

// ---- Deadlines --------------------------------------------------------------

Deadline Deadline::After(std::optional<double> seconds) {
  if (!seconds.has_value() || *seconds < 0) return Deadline(std::nullopt);
  // Capped at a year, which keeps the arithmetic far from overflow.
  const double capped = std::min(*seconds, 365.0 * 24 * 3600);
  return Deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(capped)));
}

std::chrono::milliseconds Deadline::Left() const {
  if (!at_.has_value()) return std::chrono::hours(24 * 365);
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(*at_ - Clock::now());
  return std::max(left, std::chrono::milliseconds(0));
}

std::chrono::milliseconds Deadline::Slice(
    std::chrono::milliseconds slice) const {
  return std::min(Left(), slice);
}

void InterruptibleSleep(std::chrono::milliseconds duration) {
  const Deadline deadline =
      Deadline::After(std::chrono::duration<double>(duration).count());
  while (!deadline.expired()) {
    {
      py::gil_scoped_release release;
      std::this_thread::sleep_for(deadline.Slice());
    }
    CheckSignals();
  }
}

// ---- Keys, values, topics -------------------------------------------------

BytesView::BytesView(BytesView&& other) noexcept
    : view_(other.view_),
      buffer_(other.buffer_),
      has_buffer_(other.has_buffer_) {
  other.has_buffer_ = false;
  other.view_ = {};
}

BytesView& BytesView::operator=(BytesView&& other) noexcept {
  if (this != &other) {
    Release();
    view_ = other.view_;
    buffer_ = other.buffer_;
    has_buffer_ = other.has_buffer_;
    other.has_buffer_ = false;
    other.view_ = {};
  }
  return *this;
}

void BytesView::Release() {
  if (has_buffer_) {
    PyBuffer_Release(&buffer_);
    has_buffer_ = false;
  }
}

void BytesView::Set(py::handle object, const char* what) {
  Release();
  if (FastView(object.ptr(), &view_)) return;
  if (PyUnicode_Check(object.ptr())) {  // a str subclass
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(object.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    view_ = std::string_view(data, static_cast<size_t>(size));
    return;
  }
  if (PyObject_CheckBuffer(object.ptr()) &&
      PyObject_GetBuffer(object.ptr(), &buffer_, PyBUF_CONTIG_RO) == 0) {
    has_buffer_ = true;
    // An empty buffer may have a null pointer: "" is not null.
    view_ = std::string_view(
        buffer_.buf != nullptr ? static_cast<const char*>(buffer_.buf) : "",
        static_cast<size_t>(buffer_.len));
    return;
  }
  PyErr_Clear();
  throw py::type_error(
      absl::StrCat(what,
                   " must be bytes, str, a bytes-like object or None, "
                   "not ",
                   Py_TYPE(object.ptr())->tp_name));
}

std::string_view TopicView(py::handle topic) {
  std::string_view view;
  if (topic.ptr() != Py_None && FastView(topic.ptr(), &view)) return view;
  if (PyUnicode_Check(topic.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(topic.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return std::string_view(data, static_cast<size_t>(size));
  }
  throw py::type_error(
      absl::StrCat("topic must be str, not ", Py_TYPE(topic.ptr())->tp_name));
}

void ParseHeaders(py::handle headers, std::vector<BytesView>* holders,
                  std::vector<Header>* out) {
  if (headers.is_none()) return;
  py::object items = py::reinterpret_borrow<py::object>(headers);
  if (PyDict_Check(headers.ptr())) items = items.attr("items")();
  py::list list(items);  // any iterable of pairs
  holders->reserve(holders->size() + 2 * list.size());
  out->reserve(out->size() + list.size());
  for (py::handle item : list) {
    py::tuple pair(py::reinterpret_borrow<py::object>(item));
    if (pair.size() != 2) {
      throw py::value_error("a header must be a (key, value) pair");
    }
    if (pair[0].is_none())
      throw py::value_error("a header key may not be None");
    holders->emplace_back(pair[0], "header key");
    const std::string_view key = holders->back().view();
    holders->emplace_back(pair[1], "header value");
    out->push_back(Header{key, holders->back().view()});
  }
}

py::object BytesOrNone(std::string_view data, bool has) {
  if (!has) return py::none();
  return py::bytes(data.data(), data.size());
}

// ---- Offsets ----------------------------------------------------------------

std::vector<TopicPartitionOffset> ToOffsets(py::handle offsets) {
  std::vector<TopicPartitionOffset> out;
  for (py::handle item : offsets) {
    TopicPartitionOffset tpo;
    if (py::isinstance<py::tuple>(item)) {
      py::tuple t = py::reinterpret_borrow<py::tuple>(item);
      if (t.size() != 3) {
        throw py::value_error(
            "an offset must be a (topic, partition, offset) triple");
      }
      tpo.topic = t[0].cast<std::string>();
      tpo.partition = t[1].cast<int32_t>();
      tpo.offset = t[2].cast<int64_t>();
    } else {
      tpo.topic = item.attr("topic").cast<std::string>();
      tpo.partition = item.attr("partition").cast<int32_t>();
      tpo.offset = item.attr("offset").cast<int64_t>();
    }
    out.push_back(std::move(tpo));
  }
  return out;
}

py::list FromOffsets(const std::vector<TopicPartitionOffset>& offsets) {
  py::object cls = PackageAttr("exactly.types", "TopicPartitionOffset");
  py::list out;
  for (const TopicPartitionOffset& o : offsets) {
    out.append(cls(o.topic, o.partition, o.offset));
  }
  return out;
}

py::list FromPartitions(const std::vector<TopicPartition>& partitions) {
  py::object cls = PackageAttr("exactly.types", "TopicPartition");
  py::list out;
  for (const TopicPartition& p : partitions)
    out.append(cls(p.topic, p.partition));
  return out;
}

}  // namespace exactly::python
