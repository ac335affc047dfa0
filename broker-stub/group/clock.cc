#include "group/clock.h"

#include <asio/steady_timer.hpp>
#include <chrono>

namespace exactly::broker {

namespace {

class EventLoopTimer : public Timer {
 public:
  explicit EventLoopTimer(asio::io_context& io)
      : state_(std::make_shared<State>(io)) {}
  ~EventLoopTimer() override { Cancel(); }

  void Arm(int64_t delay_ms, absl::AnyInvocable<void()> fn) override {
    Cancel();
    state_->fn = std::move(fn);
    const uint64_t arm = ++state_->arms;
    state_->timer.expires_after(std::chrono::milliseconds(delay_ms));
    // The handler holds the state, not the timer: it may run after the timer
    // is gone (then `fn` is empty), and a handler already queued when the
    // timer was re-armed must not run the new callback (hence `arm`).
    state_->timer.async_wait([state = state_, arm](const asio::error_code& ec) {
      if (ec || arm != state->arms || !state->fn) return;
      absl::AnyInvocable<void()> fn = std::move(state->fn);
      state->fn = nullptr;
      fn();
    });
  }

  void Cancel() override {
    ++state_->arms;
    state_->fn = nullptr;
    state_->timer.cancel();
  }

  bool armed() const override { return state_->fn != nullptr; }

 private:
  struct State {
    explicit State(asio::io_context& io) : timer(io) {}
    asio::steady_timer timer;
    absl::AnyInvocable<void()> fn;
    uint64_t arms = 0;
  };
  std::shared_ptr<State> state_;
};

class EventLoopClock : public Clock {
 public:
  explicit EventLoopClock(asio::io_context& io) : io_(io) {}
  std::unique_ptr<Timer> NewTimer() override {
    return std::make_unique<EventLoopTimer>(io_);
  }

 private:
  asio::io_context& io_;
};

}  // namespace

std::unique_ptr<Clock> NewEventLoopClock(asio::io_context& io) {
  return std::make_unique<EventLoopClock>(io);
}

}  // namespace exactly::broker
