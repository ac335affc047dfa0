// A blocking SDK call that cannot be cut into slices (creating a
// transactional producer initialises transactions, with the SDK's own
// retries) runs on a thread of its own while the caller waits for it with
// the GIL released and signals checked. On KeyboardInterrupt (or
// `timeout`) the caller gives up: the thread finishes on its own and
// destroys the result, which therefore must not hold Python objects.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_OFF_THREAD_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_OFF_THREAD_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "common.h"

namespace exactly::python {

// Returns fn()'s result; nullopt if `deadline` passed first. Raises what a
// signal handler raises.
template <typename T>
std::optional<T> CallOffThread(std::function<T()> fn, Deadline deadline) {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<T> result;
    bool abandoned = false;
  };
  auto state = std::make_shared<State>();
  std::thread([state, fn = std::move(fn)]() mutable {
    T result = fn();
    std::unique_lock<std::mutex> lock(state->mu);
    if (state->abandoned) return;  // `result` is destroyed here
    state->result.emplace(std::move(result));
    lock.unlock();
    state->cv.notify_all();
  }).detach();

  // Gives up: whatever the thread returns is destroyed by it, not here.
  auto abandon = [&] {
    std::optional<T> late;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      state->abandoned = true;
      late = std::move(state->result);
      state->result.reset();
    }
    py::gil_scoped_release release;
    late.reset();  // finished just now: destroy it without the GIL
  };
  for (;;) {
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(state->mu);
      state->cv.wait_for(lock, deadline.Slice(),
                         [&] { return state->result.has_value(); });
      if (state->result.has_value()) return std::move(state->result);
    }
    if (PyErr_CheckSignals() != 0) {
      py::error_already_set interrupted;
      abandon();
      throw interrupted;
    }
    if (deadline.expired()) {
      abandon();
      return std::nullopt;
    }
  }
}

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_OFF_THREAD_H_
