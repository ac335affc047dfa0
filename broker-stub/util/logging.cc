#include "util/logging.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace exactly::broker {

namespace {
std::atomic<bool> verbose{false};
std::atomic<bool> off{false};
}  // namespace

void SetVerboseLogging(bool v) { verbose.store(v); }
void SetLoggingOff(bool o) { off.store(o); }
bool VerboseLogging() { return verbose.load(std::memory_order_relaxed); }

void WriteLogLine(LogLevel level, std::string_view line) {
  if (off.load(std::memory_order_relaxed)) return;
  using std::chrono::system_clock;
  auto now = system_clock::now();
  std::time_t seconds = system_clock::to_time_t(now);
  int millis =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                           now.time_since_epoch())
                           .count() %
                       1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
  const char* tag = level == LogLevel::kDebug     ? "DEBUG"
                    : level == LogLevel::kInfo    ? "INFO"
                    : level == LogLevel::kWarning ? "WARN"
                                                  : "ERROR";
  // One fprintf per line keeps lines from different threads whole.
  std::fprintf(stderr, "%s.%03d exactly-broker %s %.*s\n", stamp, millis, tag,
               static_cast<int>(line.size()), line.data());
}

}  // namespace exactly::broker
