// The admin port of the exactly-broker binary: a TCP listener on 127.0.0.1 that
// reads command lines (admin_commands.h) and writes one reply per command. It
// has its own thread, so a command that restarts the broker never waits on the
// broker's own event loop.
#ifndef EXACTLY_BROKER_ADMIN_ADMIN_SERVER_H_
#define EXACTLY_BROKER_ADMIN_ADMIN_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "exactly/broker/broker.h"

namespace exactly::broker {

class AdminServer {
 public:
  // Listens on host:port (port 0 picks one) and serves commands against
  // `broker`.
  static absl::StatusOr<std::unique_ptr<AdminServer>> Start(
      Broker& broker, const std::string& host, uint16_t port);
  // The same with `run` answering each command line (a cluster's commands).
  using RunFn = std::function<std::string(std::string_view line)>;
  static absl::StatusOr<std::unique_ptr<AdminServer>> Start(
      RunFn run, const std::string& host, uint16_t port);
  ~AdminServer();
  uint16_t port() const;

  struct Impl;

 private:
  explicit AdminServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_ADMIN_ADMIN_SERVER_H_
