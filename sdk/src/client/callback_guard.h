// User code runs inside librdkafka's callbacks and our threads: an exception
// must never unwind through C frames or kill a delivery thread. Every call
// into user code goes through CallUser(), which turns a throw into a status.
#ifndef EXACTLY_SDK_SRC_CLIENT_CALLBACK_GUARD_H_
#define EXACTLY_SDK_SRC_CLIENT_CALLBACK_GUARD_H_

#include <exception>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "exactly/record.h"

namespace exactly::internal {

template <typename F>
absl::Status CallUser(std::string_view what, F&& f) noexcept {
  try {
    f();
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat(std::string(what), " threw an exception: ", e.what()));
  } catch (...) {
    return absl::InternalError(
        absl::StrCat(std::string(what), " threw a non-std exception"));
  }
}

// Hands `status` to `on_error`; without one (or if it throws), prints it to
// stderr so that it is never lost.
void ReportError(const ErrorCallback& on_error, const absl::Status& status);

}  // namespace exactly::internal

#endif  // EXACTLY_SDK_SRC_CLIENT_CALLBACK_GUARD_H_
