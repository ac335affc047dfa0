// The admin port's command language: one line in, one reply out, for scripts that drive a
// broker running as a binary (docs/faults.md has the full list).
//
//   drop-produce-responses count=5 one-in=50
//   fail-requests api=Produce error=NOT_LEADER_OR_FOLLOWER count=3 topic=orders partition=0
//   restart mode=crash
//
// Replies are "ok" followed by the result, or "error: <why>". A reply of several lines (history)
// ends with a line "end".
#ifndef EXACTLY_BROKER_ADMIN_ADMIN_COMMANDS_H_
#define EXACTLY_BROKER_ADMIN_ADMIN_COMMANDS_H_

#include <string>
#include <string_view>

#include "exactly/broker/broker.h"

namespace exactly::broker {

// Runs one command line against `broker` and returns the reply (without a trailing newline).
std::string RunAdminCommand(Broker& broker, std::string_view line);

// The help text listing every command.
std::string AdminHelp();

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_ADMIN_ADMIN_COMMANDS_H_
