// The admin port's command language (admin/admin_commands.h): each input is up
// to 8 lines, each run with RunAdminCommand against an in-memory broker that
// lives across inputs, as a script driving the broker binary would. Every
// line must get a reply that is "ok..." or "error: ..."; nothing may crash,
// hang or take the broker down.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "admin/admin_commands.h"
#include "exactly/broker/broker.h"
#include "util/logging.h"

namespace {

std::unique_ptr<exactly::broker::Broker> broker;

// The topics inputs create pile up in the one broker: a fresh broker every so
// many inputs keeps a long run's memory to what one stretch of inputs makes.
constexpr int kInputsPerBroker = 2000;

void StartBroker() {
  broker.reset();
  exactly::broker::BrokerOptions options;
  options.host = "127.0.0.1";
  absl::StatusOr<std::unique_ptr<exactly::broker::Broker>> started =
      exactly::broker::Broker::Start(options);
  if (!started.ok()) {
    std::fprintf(stderr, "admin_command_fuzz: broker: %s\n",
                 std::string(started.status().message()).c_str());
    std::abort();
  }
  broker = std::move(*started);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  exactly::broker::SetLoggingOff(true);
  StartBroker();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static int inputs = 0;
  if (++inputs % kInputsPerBroker == 0) StartBroker();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (int line = 0; line < 8 && !input.empty(); ++line) {
    size_t end = input.find('\n');
    std::string_view command = input.substr(0, end);
    input = end == std::string_view::npos ? std::string_view()
                                          : input.substr(end + 1);
    std::string reply = exactly::broker::RunAdminCommand(*broker, command);
    if (reply.rfind("ok", 0) != 0 && reply.rfind("error: ", 0) != 0) {
      std::fprintf(stderr, "reply neither ok nor error: %s\n", reply.c_str());
      std::abort();
    }
  }
  return 0;
}
