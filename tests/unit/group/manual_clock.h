// A clock for unit tests of the group state machine: time moves only when the
// test says so, and timers that come due then run in deadline order.
#ifndef EXACTLY_TESTS_UNIT_GROUP_MANUAL_CLOCK_H_
#define EXACTLY_TESTS_UNIT_GROUP_MANUAL_CLOCK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "group/clock.h"

namespace exactly::broker::testing {

class ManualClock : public Clock {
 public:
  std::unique_ptr<Timer> NewTimer() override {
    return std::make_unique<ManualTimer>(this);
  }

  int64_t now_ms() const { return now_ms_; }

  // Moves time forward by `ms`, running every timer that comes due (also
  // timers armed by those timers, if due by then).
  void Advance(int64_t ms) {
    const int64_t until = now_ms_ + ms;
    for (;;) {
      auto it = due_.begin();
      if (it == due_.end() || it->first.first > until) break;
      now_ms_ = std::max(now_ms_, it->first.first);
      ManualTimer* timer = it->second;
      due_.erase(it);
      timer->Fire();
    }
    now_ms_ = until;
  }

 private:
  class ManualTimer : public Timer {
   public:
    explicit ManualTimer(ManualClock* clock) : clock_(clock) {}
    ~ManualTimer() override { Cancel(); }
    void Arm(int64_t delay_ms, absl::AnyInvocable<void()> fn) override {
      Cancel();
      fn_ = std::move(fn);
      key_ = {clock_->now_ms_ + delay_ms, clock_->next_seq_++};
      clock_->due_[key_] = this;
    }
    void Cancel() override {
      if (fn_) clock_->due_.erase(key_);
      fn_ = nullptr;
    }
    bool armed() const override { return static_cast<bool>(fn_); }
    void Fire() {
      absl::AnyInvocable<void()> fn = std::move(fn_);
      fn_ = nullptr;
      fn();  // may destroy this timer
    }

   private:
    ManualClock* clock_;
    absl::AnyInvocable<void()> fn_;
    std::pair<int64_t, uint64_t> key_{0, 0};
  };

  int64_t now_ms_ = 0;
  uint64_t next_seq_ = 0;
  std::map<std::pair<int64_t, uint64_t>, ManualTimer*> due_;
};

}  // namespace exactly::broker::testing

#endif  // EXACTLY_TESTS_UNIT_GROUP_MANUAL_CLOCK_H_
