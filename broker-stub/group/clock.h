// Time for the group coordinator: session, rebalance and join-delay timers.
// In the broker they run on its event loop (asio steady timers); unit tests of
// the group state machine use a manual clock instead, so that a session
// timeout is a step of the test and not a wait.
#ifndef EXACTLY_BROKER_GROUP_CLOCK_H_
#define EXACTLY_BROKER_GROUP_CLOCK_H_

#include <asio/io_context.hpp>
#include <cstdint>
#include <memory>

#include "absl/functional/any_invocable.h"

namespace exactly::broker {

// One timer: runs its callback once when it expires, unless it was cancelled
// or re-armed first. Destroying a timer cancels it. The callback may destroy
// the timer.
class Timer {
 public:
  virtual ~Timer() = default;
  // Replaces whatever was armed with `fn`, to run after `delay_ms` (0: on the
  // next turn of the event loop, never inside this call).
  virtual void Arm(int64_t delay_ms, absl::AnyInvocable<void()> fn) = 0;
  virtual void Cancel() = 0;
  virtual bool armed() const = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::unique_ptr<Timer> NewTimer() = 0;
};

// Timers on `io` (asio steady timers), for the broker's event loop.
std::unique_ptr<Clock> NewEventLoopClock(asio::io_context& io);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_GROUP_CLOCK_H_
