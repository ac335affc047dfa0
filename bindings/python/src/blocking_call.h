// The block every wrapper (producer, consumer, spool, processor) puts around
// a blocking native call, after the rule in common.h: the call is made with
// the GIL released; a long wait is cut into slices, between which the
// callbacks it queued run and signals are checked (Ctrl-C interrupts it
// within one slice). The status the call ends with is the caller's to raise
// (Check / ThrowStatus: the exactly.Error subclasses).
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_BLOCKING_CALL_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_BLOCKING_CALL_H_

#include <chrono>
#include <optional>

#include "callbacks.h"
#include "common.h"

namespace exactly::python {

// Makes `call()` with the GIL released; returns what it returns.
template <typename Call>
decltype(auto) WithoutGil(Call&& call) {
  py::gil_scoped_release release;
  return call();
}

// Makes `call(slice)` (which blocks for at most `slice`, less when
// `deadline` is nearer) with the GIL released, then `over(result)` with the
// GIL, which runs the callbacks the call queued and says whether the call is
// over (done, or failed for good; it may also raise). Until it is over or
// `deadline` has passed, checks for signals and calls again. Returns the
// last result.
template <typename Call, typename Over>
auto CallInSlices(const Deadline& deadline, std::chrono::milliseconds slice,
                  Call call, Over over) {
  for (;;) {
    auto result = WithoutGil([&] { return call(deadline.Slice(slice)); });
    if (over(result) || deadline.expired()) return result;
    CheckSignals();
  }
}

// poll(timeout) of a client whose callbacks wait in `queue`: `drain()` runs
// them and returns how many ran. While none have, waits for `queue` in
// slices with the GIL released, checking for signals, until `timeout` (0:
// no wait; None: no limit). Returns how many ran.
template <typename Drain>
int PollCallbacks(CallbackQueue& queue, std::optional<double> timeout,
                  Drain drain) {
  int ran = drain();
  if (ran > 0 || (timeout.has_value() && *timeout == 0)) return ran;
  const Deadline deadline = Deadline::After(timeout);
  while (!deadline.expired()) {
    WithoutGil([&] { queue.Wait(deadline.Slice()); });
    ran = drain();
    if (ran > 0) return ran;
    CheckSignals();
  }
  return 0;
}

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_BLOCKING_CALL_H_
