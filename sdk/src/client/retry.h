// Repeating a failed call the way librdkafka's rules say: pause with
// exponential, capped back-off (a little jitter keeps many clients out of
// step) and repeat only while the error is retriable.
#ifndef EXACTLY_SDK_SRC_CLIENT_RETRY_H_
#define EXACTLY_SDK_SRC_CLIENT_RETRY_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "exactly/error.h"
#include "exactly/options.h"

namespace exactly::internal {

class Backoff {
 public:
  explicit Backoff(const RetryPolicy& policy)
      : next_(policy.initial_backoff), max_(policy.max_backoff) {}

  void Sleep() {
    thread_local std::minstd_rand random(std::random_device{}());
    const auto jitter = std::chrono::milliseconds(
        next_.count() >= 4 ? random() % (next_.count() / 4) : 0);
    std::this_thread::sleep_for(next_ + jitter);
    next_ = std::min(next_ * 2, max_);
  }

 private:
  std::chrono::milliseconds next_;
  const std::chrono::milliseconds max_;
};

// Calls `call` until it returns anything but a retriable error, at most
// 1 + policy.max_retries times; counts the repeats in `*retries`.
inline absl::Status RetryWhileRetriable(const RetryPolicy& policy,
                                        absl::FunctionRef<absl::Status()> call,
                                        uint64_t* retries) {
  Backoff backoff(policy);
  absl::Status status = call();
  for (int i = 0;
       i < policy.max_retries && NextTxnAction(status) == TxnAction::kRetry;
       ++i) {
    backoff.Sleep();
    ++*retries;
    status = call();
  }
  return status;
}

}  // namespace exactly::internal

#endif  // EXACTLY_SDK_SRC_CLIENT_RETRY_H_
