// The broker's log lines: one line each on stderr, with a timestamp and the
// broker's port, so that a failing test's output shows what the broker did
// (faults, errors, restarts).
#ifndef EXACTLY_BROKER_UTIL_LOGGING_H_
#define EXACTLY_BROKER_UTIL_LOGGING_H_

#include <string_view>

#include "absl/strings/str_cat.h"

namespace exactly::broker {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// Debug lines are printed only when verbose logging is on
// (BrokerOptions::verbose).
void SetVerboseLogging(bool verbose);
// Drops every line (fuzz targets: millions of requests, each may warn).
void SetLoggingOff(bool off);
void WriteLogLine(LogLevel level, std::string_view line);

template <class... Args>
void LogInfo(const Args&... args) {
  WriteLogLine(LogLevel::kInfo, absl::StrCat(args...));
}
template <class... Args>
void LogWarning(const Args&... args) {
  WriteLogLine(LogLevel::kWarning, absl::StrCat(args...));
}
template <class... Args>
void LogError(const Args&... args) {
  WriteLogLine(LogLevel::kError, absl::StrCat(args...));
}
bool VerboseLogging();
template <class... Args>
void LogDebug(const Args&... args) {
  if (VerboseLogging()) WriteLogLine(LogLevel::kDebug, absl::StrCat(args...));
}

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_UTIL_LOGGING_H_
