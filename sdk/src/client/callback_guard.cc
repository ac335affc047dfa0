#include "client/callback_guard.h"

#include <cstdio>

namespace exactly::internal {

void ReportError(const ErrorCallback& on_error, const absl::Status& status) {
  if (on_error) {
    absl::Status s = CallUser("on_error", [&] { on_error(status); });
    if (s.ok()) return;
    std::fprintf(stderr, "exactly: %s\n", s.ToString().c_str());
  }
  std::fprintf(stderr, "exactly: %s\n", status.ToString().c_str());
}

}  // namespace exactly::internal
