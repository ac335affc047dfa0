#include "fast_send.h"

#include <cstdint>
#include <limits>
#include <new>

namespace exactly::python {
namespace {

namespace py = pybind11;

// What the function is bound to (its `self`, inside a capsule).
struct SendTarget {
  ProducerBase* producer;
  PyObject* owner;  // a strong reference
};

constexpr char kCapsuleName[] = "exactly._exactly.send_target";

void DestroyTarget(PyObject* capsule) {
  auto* target =
      static_cast<SendTarget*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (target == nullptr) return;
  Py_XDECREF(target->owner);
  delete target;
}

enum Arg {
  kTopic,
  kValue,
  kKey,
  kPartition,
  kTimestamp,
  kHeaders,
  kOnDelivery,
  kArgCount
};
constexpr const char* kNames[kArgCount] = {
    "topic",        "value",   "key",        "partition",
    "timestamp_ms", "headers", "on_delivery"};
constexpr Py_ssize_t kMaxPositional = kPartition;  // the rest keyword-only

// Places the arguments; false (with a TypeError set) when they do not fit
// send()'s signature.
bool ParseArgs(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               PyObject* out[kArgCount]) {
  if (nargs > kMaxPositional) {
    PyErr_Format(PyExc_TypeError,
                 "send() takes from 1 to 3 positional arguments but %zd were "
                 "given",
                 nargs);
    return false;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t j = 0; j < nkw; ++j) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, j);
    int k = 0;
    while (k < kArgCount &&
           PyUnicode_CompareWithASCIIString(name, kNames[k]) != 0) {
      ++k;
    }
    if (k == kArgCount) {
      PyErr_Format(PyExc_TypeError,
                   "send() got an unexpected keyword argument '%U'", name);
      return false;
    }
    if (out[k] != nullptr) {
      PyErr_Format(PyExc_TypeError,
                   "send() got multiple values for argument '%s'", kNames[k]);
      return false;
    }
    out[k] = args[nargs + j];
  }
  if (out[kTopic] == nullptr) {
    PyErr_SetString(PyExc_TypeError,
                    "send() missing required argument 'topic'");
    return false;
  }
  return true;
}

// An int argument within [lo, hi]; false with TypeError/OverflowError set.
bool IntArg(PyObject* o, const char* name, int64_t fallback, int64_t lo,
            int64_t hi, int64_t* out) {
  if (o == nullptr) {
    *out = fallback;
    return true;
  }
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be int, not %s", name,
                 Py_TYPE(o)->tp_name);
    return false;
  }
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) return false;
  if (v < lo || v > hi) {
    PyErr_Format(PyExc_OverflowError, "%s %lld is out of range", name, v);
    return false;
  }
  *out = v;
  return true;
}

PyObject* FastSend(PyObject* capsule, PyObject* const* args, Py_ssize_t nargs,
                   PyObject* kwnames) {
  auto* target =
      static_cast<SendTarget*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (target == nullptr) return nullptr;
  PyObject* a[kArgCount] = {};
  if (!ParseArgs(args, nargs, kwnames, a)) return nullptr;
  int64_t partition = 0;
  int64_t timestamp_ms = 0;
  if (!IntArg(a[kPartition], "partition", -1,
              std::numeric_limits<int32_t>::min(),
              std::numeric_limits<int32_t>::max(), &partition) ||
      !IntArg(a[kTimestamp], "timestamp_ms", 0,
              std::numeric_limits<int64_t>::min(),
              std::numeric_limits<int64_t>::max(), &timestamp_ms)) {
    return nullptr;
  }
  auto or_none = [](PyObject* o) {
    return o == nullptr ? py::handle(Py_None) : py::handle(o);
  };
  // The same translation pybind11's dispatcher makes.
  try {
    target->producer->Send(py::handle(a[kTopic]), or_none(a[kValue]),
                           or_none(a[kKey]), static_cast<int32_t>(partition),
                           timestamp_ms, or_none(a[kHeaders]),
                           or_none(a[kOnDelivery]));
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (py::builtin_exception& e) {
    e.set_error();
    return nullptr;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return nullptr;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef kSendDef = {
    "send",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(FastSend)),
    METH_FASTCALL | METH_KEYWORDS,
    "send(topic, value=None, key=None, *, partition=-1, timestamp_ms=0, "
    "headers=None, on_delivery=None)\n--\n\n"
    "Queues one record (see exactly.Producer.send)."};

}  // namespace

py::object MakeFastSend(ProducerBase* producer, py::object owner) {
  auto* target = new SendTarget{producer, owner.release().ptr()};
  PyObject* capsule = PyCapsule_New(target, kCapsuleName, DestroyTarget);
  if (capsule == nullptr) {
    Py_DECREF(target->owner);
    delete target;
    throw py::error_already_set();
  }
  PyObject* fn = PyCFunction_NewEx(&kSendDef, capsule, nullptr);
  Py_DECREF(capsule);  // the function holds it now
  if (fn == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(fn);
}

}  // namespace exactly::python
