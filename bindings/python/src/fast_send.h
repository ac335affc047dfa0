// Producer.send() as a plain CPython vectorcall function.
//
// send() is the one call a Python application makes per record, so its fixed
// cost is the binding's per-record cost. pybind11's generic dispatcher (type
// lookups for `self`, overload resolution, argument casters) costs more than
// the send itself; this entry point parses send()'s seven arguments by hand
// and calls ProducerBase::Send directly.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_FAST_SEND_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_FAST_SEND_H_

#include <pybind11/pybind11.h>

#include "producer_base.h"

namespace exactly::python {

// A Python callable with send()'s signature,
//   send(topic, value=None, key=None, *, partition=-1, timestamp_ms=0,
//        headers=None, on_delivery=None),
// that sends through `producer`. It keeps `owner` (the Python object that
// owns `producer`) alive.
pybind11::object MakeFastSend(ProducerBase* producer, pybind11::object owner);

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_FAST_SEND_H_
