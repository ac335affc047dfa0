// The admin port's command language: one line in, one reply out, for scripts
// that drive a broker running as a binary (docs/faults.md has the full list).
//
//   drop-produce-responses count=5 one-in=50
//   fail-requests api=Produce error=NOT_LEADER_OR_FOLLOWER count=3 topic=orders
//   partition=0 restart mode=crash
//
// Replies are "ok" followed by the result, or "error: <why>". A reply of
// several lines (history) ends with a line "end".
#ifndef EXACTLY_BROKER_ADMIN_ADMIN_COMMANDS_H_
#define EXACTLY_BROKER_ADMIN_ADMIN_COMMANDS_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "exactly/broker/broker.h"

namespace exactly::broker {

// Runs one command line against `broker` and returns the reply (without a
// trailing newline).
std::string RunAdminCommand(Broker& broker, std::string_view line);

// The pieces of RunAdminCommand, for the cluster's commands
// (cluster_admin_commands.h): a line as "verb key=value ...", one parsed
// command run against one broker, and the reply a result makes.
struct AdminCommand {
  std::string verb;
  std::map<std::string, std::string> args;
};
absl::StatusOr<AdminCommand> ParseAdminCommand(std::string_view line);
absl::StatusOr<std::string> RunParsedAdminCommand(Broker& broker,
                                                  const AdminCommand& command);
std::string AdminReply(const absl::StatusOr<std::string>& result);

// The help text listing every command.
std::string AdminHelp();

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_ADMIN_ADMIN_COMMANDS_H_
