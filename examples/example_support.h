// What the SDK examples share: their --flag VALUE parsing, the bundled broker
// they start when no cluster is given, and reading a topic back as a
// downstream service would. Copy this header along with an example.
#ifndef EXACTLY_EXAMPLES_EXAMPLE_SUPPORT_H_
#define EXACTLY_EXAMPLES_EXAMPLE_SUPPORT_H_

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "exactly/broker/broker.h"
#include "exactly/exactly.h"

namespace exactly::examples {

// A flag's name and where its value goes.
using Flag = std::pair<const char*, std::variant<std::string*, int*>>;

// Parses "--name VALUE" pairs; false on an unknown flag or a missing value.
inline bool ParseFlags(int argc, char** argv,
                       std::initializer_list<Flag> flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    bool known = false;
    for (const auto& [name, target] : flags) {
      if (arg != name || i + 1 >= argc) continue;
      const char* value = argv[++i];
      if (auto* s = std::get_if<std::string*>(&target)) {
        **s = value;
      } else {
        *std::get<int*>(target) = std::atoi(value);
      }
      known = true;
      break;
    }
    if (!known) return false;
  }
  return true;
}

// With no bootstrap servers given, starts the bundled broker in this process
// into `broker` and points `bootstrap_servers` at it; given servers, leaves
// `broker` null. False (after saying why on stderr) if the broker cannot
// start.
inline bool StartBundledBrokerUnlessGiven(
    std::string& bootstrap_servers,
    std::unique_ptr<exactly::broker::Broker>& broker) {
  if (!bootstrap_servers.empty()) return true;
  auto started = exactly::broker::Broker::Start({});
  if (!started.ok()) {
    std::fprintf(stderr, "cannot start the bundled broker: %s\n",
                 started.status().ToString().c_str());
    return false;
  }
  broker = std::move(*started);
  bootstrap_servers = broker->bootstrap_servers();
  return true;
}

// Reads `topic` from the beginning with a read_committed consumer of group
// `group`, passing each record to `on_message`, until `done()` or `timeout`.
// False if the consumer cannot be created or subscribed.
inline bool ReadTopic(
    const std::string& bootstrap_servers, const std::string& topic,
    const std::string& group, std::chrono::seconds timeout,
    const std::function<void(const exactly::Message&)>& on_message,
    const std::function<bool()>& done) {
  exactly::ConsumerOptions options;
  options.bootstrap_servers = bootstrap_servers;
  options.group_id = group;
  options.properties["auto.offset.reset"] = "earliest";
  auto consumer = exactly::Consumer::Create(options);
  if (!consumer.ok() || !(*consumer)->Subscribe({topic}).ok()) {
    std::fprintf(stderr, "cannot create or subscribe the consumer\n");
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    auto batch = (*consumer)->PollBatch(1000, std::chrono::milliseconds(200));
    if (!batch.ok()) {
      std::fprintf(stderr, "poll: %s\n", batch.status().ToString().c_str());
      continue;
    }
    for (const exactly::Message& m : *batch) on_message(m);
  }
  // Leaves the group.
  (*consumer)->Close().IgnoreError();
  return true;
}

}  // namespace exactly::examples

#endif  // EXACTLY_EXAMPLES_EXAMPLE_SUPPORT_H_
