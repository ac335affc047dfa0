#include "admin/admin_commands.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "protocol/api_key.h"
#include "protocol/error_code.h"

namespace exactly::broker {

namespace {

using Command = AdminCommand;

}  // namespace

// "verb key=value key=value": the verb and the arguments.
absl::StatusOr<Command> ParseAdminCommand(std::string_view line) {
  Command c;
  for (absl::string_view word :
       absl::StrSplit(absl::string_view(line.data(), line.size()), ' ',
                      absl::SkipEmpty())) {
    if (c.verb.empty()) {
      c.verb = std::string(word);
      continue;
    }
    size_t eq = word.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected key=value, got '", std::string(word), "'"));
    }
    c.args[std::string(word.substr(0, eq))] = std::string(word.substr(eq + 1));
  }
  if (c.verb.empty()) return absl::InvalidArgumentError("empty command");
  return c;
}

namespace {

class Args {
 public:
  explicit Args(const Command& c) : c_(c) {}

  absl::StatusOr<int64_t> Int(const std::string& key,
                              std::optional<int64_t> fallback) {
    used_.insert(key);
    auto it = c_.args.find(key);
    if (it == c_.args.end()) {
      if (fallback) return *fallback;
      return absl::InvalidArgumentError(absl::StrCat("missing ", key, "="));
    }
    int64_t v = 0;
    if (!absl::SimpleAtoi(it->second, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat(key, "=", it->second, " is not a number"));
    }
    return v;
  }
  std::optional<std::string> Str(const std::string& key) {
    used_.insert(key);
    auto it = c_.args.find(key);
    if (it == c_.args.end()) return std::nullopt;
    return it->second;
  }
  // The request filter shared by the fault commands: api=, topic=, partition=.
  absl::StatusOr<FaultMatch> Match() {
    FaultMatch m;
    if (auto api = Str("api")) {
      auto key = protocol::ApiKeyFromName(*api);
      int64_t number = 0;
      if (key) {
        m.api_key = static_cast<int16_t>(*key);
      } else if (absl::SimpleAtoi(*api, &number)) {
        m.api_key = static_cast<int16_t>(number);
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown api '", *api, "'"));
      }
    }
    m.topic = Str("topic");
    if (c_.args.count("partition")) {
      absl::StatusOr<int64_t> p = Int("partition", std::nullopt);
      if (!p.ok()) return p.status();
      m.partition = static_cast<int32_t>(*p);
    }
    return m;
  }
  // Unknown keys are a typo the user wants to hear about.
  absl::Status CheckAllUsed() const {
    for (const auto& [key, value] : c_.args) {
      if (!used_.count(key)) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown argument ", key, "="));
      }
    }
    return absl::OkStatus();
  }

 private:
  const Command& c_;
  std::set<std::string> used_;
};

std::string Reply(const absl::Status& s, std::string_view ok_text = "") {
  if (!s.ok()) return absl::StrCat("error: ", s.message());
  return ok_text.empty() ? "ok" : absl::StrCat("ok ", std::string(ok_text));
}

absl::StatusOr<std::string> Run(Broker& broker, const Command& c) {
  Args args(c);
  Faults& faults = broker.faults();
  auto finish = [&](std::string text = "") -> absl::StatusOr<std::string> {
    if (absl::Status s = args.CheckAllUsed(); !s.ok()) return s;
    return text;
  };
  if (c.verb == "help") return finish(AdminHelp());
  if (c.verb == "fail-requests") {
    absl::StatusOr<FaultMatch> match = args.Match();
    if (!match.ok()) return match.status();
    std::optional<std::string> error = args.Str("error");
    if (!error)
      return absl::InvalidArgumentError("missing error=<KAFKA_ERROR_NAME>");
    std::optional<protocol::ErrorCode> code =
        protocol::ErrorCodeFromName(*error);
    if (!code)
      return absl::InvalidArgumentError(
          absl::StrCat("unknown error '", *error, "'"));
    absl::StatusOr<int64_t> count = args.Int("count", 1);
    if (!count.ok()) return count.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    faults.FailRequests(*match, static_cast<int16_t>(*code),
                        static_cast<int>(*count));
    return std::string();
  }
  if (c.verb == "drop-produce-responses" ||
      c.verb == "drop-produce-responses-keep-open") {
    absl::StatusOr<FaultMatch> match = args.Match();
    if (!match.ok()) return match.status();
    absl::StatusOr<int64_t> count = args.Int("count", 1);
    absl::StatusOr<int64_t> one_in = args.Int("one-in", 1);
    if (!count.ok()) return count.status();
    if (!one_in.ok()) return one_in.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    if (c.verb == "drop-produce-responses") {
      faults.DropProduceResponses(static_cast<int>(*count),
                                  static_cast<int>(*one_in), *match);
    } else {
      faults.DropProduceResponsesKeepOpen(static_cast<int>(*count),
                                          static_cast<int>(*one_in), *match);
    }
    return std::string();
  }
  if (c.verb == "latency") {
    absl::StatusOr<FaultMatch> match = args.Match();
    if (!match.ok()) return match.status();
    absl::StatusOr<int64_t> ms = args.Int("ms", std::nullopt);
    if (!ms.ok()) return ms.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    faults.AddLatency(static_cast<int32_t>(*ms), *match);
    return std::string();
  }
  if (c.verb == "close-connections") {
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    faults.CloseAllConnections();
    return std::string();
  }
  if (c.verb == "down") {
    absl::StatusOr<int64_t> ms = args.Int("ms", std::nullopt);
    if (!ms.ok()) return ms.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    faults.BrokerDown(static_cast<int32_t>(*ms));
    return std::string();
  }
  if (c.verb == "hold-txn-markers") {
    absl::StatusOr<int64_t> count = args.Int("count", 1);
    if (!count.ok()) return count.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    faults.HoldTransactionMarkers(static_cast<int>(*count));
    return std::string();
  }
  if (c.verb == "hold-markers" || c.verb == "release-markers") {
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    if (c.verb == "hold-markers") {
      faults.HoldMarkers();
    } else {
      faults.ReleaseMarkers();
    }
    return std::string();
  }
  if (c.verb == "restart") {
    std::string mode = args.Str("mode").value_or("clean");
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    Broker::RestartMode m;
    if (mode == "clean") {
      m = Broker::RestartMode::kClean;
    } else if (mode == "crash") {
      m = Broker::RestartMode::kCrash;
    } else if (mode == "power-loss") {
      m = Broker::RestartMode::kPowerLoss;
    } else {
      return absl::InvalidArgumentError(
          "mode must be clean, crash or power-loss");
    }
    if (absl::Status s = broker.Restart(m); !s.ok()) return s;
    return std::string();
  }
  if (c.verb == "clear") {
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    faults.Clear();
    return std::string();
  }
  if (c.verb == "history") {
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    std::vector<std::string> lines = faults.History();
    return absl::StrCat(lines.size(), "\n", absl::StrJoin(lines, "\n"),
                        lines.empty() ? "" : "\n", "end");
  }
  if (c.verb == "create-topic") {
    std::optional<std::string> name = args.Str("name");
    absl::StatusOr<int64_t> partitions = args.Int("partitions", 1);
    if (!name) return absl::InvalidArgumentError("missing name=");
    if (!partitions.ok()) return partitions.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    if (absl::Status s =
            broker.CreateTopic(*name, static_cast<int32_t>(*partitions));
        !s.ok()) {
      return s;
    }
    return std::string();
  }
  if (c.verb == "offsets") {
    std::optional<std::string> topic = args.Str("topic");
    absl::StatusOr<int64_t> partition = args.Int("partition", 0);
    if (!topic) return absl::InvalidArgumentError("missing topic=");
    if (!partition.ok()) return partition.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    absl::StatusOr<PartitionOffsets> o =
        broker.Offsets(*topic, static_cast<int32_t>(*partition));
    if (!o.ok()) return o.status();
    return absl::StrCat(
        "log_start=", o->log_start_offset, " hwm=", o->high_watermark,
        " lso=", o->last_stable_offset, " leo=", o->log_end_offset);
  }
  // KIP-664's tools for a hanging transaction: find it, then end it.
  if (c.verb == "describe-producers") {
    std::optional<std::string> topic = args.Str("topic");
    absl::StatusOr<int64_t> partition = args.Int("partition", 0);
    if (!topic) return absl::InvalidArgumentError("missing topic=");
    if (!partition.ok()) return partition.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    absl::StatusOr<std::vector<ActiveProducer>> producers =
        broker.DescribeProducers(*topic, static_cast<int32_t>(*partition));
    if (!producers.ok()) return producers.status();
    if (producers->empty()) return std::string("none");
    return absl::StrJoin(
        *producers, ", ", [](std::string* out, const ActiveProducer& a) {
          absl::StrAppend(out, "producer_id=", a.producer_id,
                          " epoch=", a.producer_epoch,
                          " last_sequence=", a.last_sequence,
                          " last_timestamp=", a.last_timestamp,
                          " coordinator_epoch=", a.coordinator_epoch,
                          " txn_start_offset=", a.current_txn_start_offset);
        });
  }
  if (c.verb == "abort-transaction") {
    std::optional<std::string> topic = args.Str("topic");
    absl::StatusOr<int64_t> partition = args.Int("partition", 0);
    absl::StatusOr<int64_t> producer_id = args.Int("producer-id", std::nullopt);
    if (!topic) return absl::InvalidArgumentError("missing topic=");
    if (!partition.ok()) return partition.status();
    if (!producer_id.ok()) return producer_id.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    absl::StatusOr<int64_t> marker = broker.AbortTransaction(
        *topic, static_cast<int32_t>(*partition), *producer_id);
    if (!marker.ok()) return marker.status();
    return absl::StrCat("marker_offset=", *marker);
  }
  // SASL SCRAM credentials, as AlterUserScramCredentials changes them.
  if (c.verb == "scram-set") {
    std::optional<std::string> user = args.Str("user");
    std::string mechanism = args.Str("mechanism").value_or("SCRAM-SHA-256");
    std::optional<std::string> password = args.Str("password");
    absl::StatusOr<int64_t> iterations = args.Int("iterations", 4096);
    if (!user) return absl::InvalidArgumentError("missing user=");
    if (!password) return absl::InvalidArgumentError("missing password=");
    if (!iterations.ok()) return iterations.status();
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    if (*iterations < 0 || *iterations > INT32_MAX)
      return absl::InvalidArgumentError("iterations= is out of range");
    if (absl::Status s = broker.SetScramCredential(
            *user, mechanism, *password, static_cast<int32_t>(*iterations));
        !s.ok()) {
      return s;
    }
    return std::string();
  }
  if (c.verb == "scram-delete") {
    std::optional<std::string> user = args.Str("user");
    std::optional<std::string> mechanism = args.Str("mechanism");
    if (!user) return absl::InvalidArgumentError("missing user=");
    if (!mechanism) return absl::InvalidArgumentError("missing mechanism=");
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    if (absl::Status s = broker.DeleteScramCredential(*user, *mechanism);
        !s.ok()) {
      return s;
    }
    return std::string();
  }
  if (c.verb == "scram-list") {
    if (absl::StatusOr<std::string> done = finish(); !done.ok()) return done;
    std::vector<ScramCredentialInfo> credentials = broker.ScramCredentials();
    if (credentials.empty()) return std::string("none");
    return absl::StrJoin(
        credentials, ", ", [](std::string* out, const ScramCredentialInfo& i) {
          absl::StrAppend(out, "user=", i.user, " mechanism=", i.mechanism,
                          " iterations=", i.iterations);
        });
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown command '", c.verb, "' (try help)"));
}

}  // namespace

std::string RunAdminCommand(Broker& broker, std::string_view line) {
  absl::StatusOr<Command> command = ParseAdminCommand(line);
  if (!command.ok()) return Reply(command.status());
  return AdminReply(Run(broker, *command));
}

absl::StatusOr<std::string> RunParsedAdminCommand(Broker& broker,
                                                  const AdminCommand& command) {
  return Run(broker, command);
}

std::string AdminReply(const absl::StatusOr<std::string>& result) {
  if (!result.ok()) return Reply(result.status());
  return Reply(absl::OkStatus(), *result);
}

std::string AdminHelp() {
  return "commands: fail-requests api= error= [count=1] [topic=] [partition=] "
         "| "
         "drop-produce-responses [count=1] [one-in=1] [topic=] | "
         "drop-produce-responses-keep-open [count=1] [one-in=1] [topic=] | "
         "latency ms= [api=] | "
         "close-connections | down ms= | hold-txn-markers [count=1] | "
         "hold-markers | release-markers | "
         "restart [mode=clean|crash|power-loss] | clear | history | "
         "create-topic name= [partitions=1] | offsets topic= [partition=0] | "
         "describe-producers topic= [partition=0] | "
         "abort-transaction topic= [partition=0] producer-id= | "
         "scram-set user= [mechanism=SCRAM-SHA-256] password= "
         "[iterations=4096] | scram-delete user= mechanism= | scram-list | "
         "help";
}

}  // namespace exactly::broker
