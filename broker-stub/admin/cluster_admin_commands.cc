#include "admin/cluster_admin_commands.h"

#include <optional>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "admin/admin_commands.h"

namespace exactly::broker {

namespace {

// Takes key= out of `c` as a number: nullopt when absent.
absl::StatusOr<std::optional<int64_t>> TakeInt(AdminCommand& c,
                                               const std::string& key) {
  auto it = c.args.find(key);
  if (it == c.args.end()) return std::nullopt;
  int64_t v = 0;
  if (!absl::SimpleAtoi(it->second, &v))
    return absl::InvalidArgumentError(
        absl::StrCat(key, "=", it->second, " is not a number"));
  c.args.erase(it);
  return v;
}

// The arguments left over once a command took its own: a typo to report.
absl::Status NoneLeft(const AdminCommand& c) {
  if (c.args.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown argument ", c.args.begin()->first, "="));
}

absl::StatusOr<Broker::RestartMode> TakeMode(AdminCommand& c) {
  auto it = c.args.find("mode");
  const std::string mode = it == c.args.end() ? "clean" : it->second;
  if (it != c.args.end()) c.args.erase(it);
  if (mode == "clean") return Broker::RestartMode::kClean;
  if (mode == "crash") return Broker::RestartMode::kCrash;
  if (mode == "power-loss") return Broker::RestartMode::kPowerLoss;
  return absl::InvalidArgumentError("mode must be clean, crash or power-loss");
}

std::string Nodes(const std::vector<int32_t>& ids) {
  return ids.empty() ? "-" : absl::StrJoin(ids, ",");
}

// The cluster's own verbs; nullopt when `c` is not one of them.
std::optional<absl::StatusOr<std::string>> RunClusterVerb(
    Cluster& cluster, AdminCommand& c, std::optional<int64_t> node) {
  const std::string& verb = c.verb;
  static const std::set<std::string> kNeedNode = {"kill",
                                                  "isolate",
                                                  "heal",
                                                  "pause-replication",
                                                  "resume-replication",
                                                  "replication-latency"};
  if (kNeedNode.count(verb) && !node)
    return absl::InvalidArgumentError(absl::StrCat(verb, " needs node="));
  const int32_t id = node ? static_cast<int32_t>(*node) : 0;
  auto done = [&](absl::Status s) -> absl::StatusOr<std::string> {
    if (!s.ok()) return s;
    return std::string();
  };
  if (verb == "kill" || verb == "isolate" || verb == "heal" ||
      verb == "pause-replication" || verb == "resume-replication") {
    if (absl::Status s = NoneLeft(c); !s.ok()) return s;
    if (verb == "kill") return done(cluster.Kill(id));
    if (verb == "isolate") return done(cluster.Isolate(id));
    if (verb == "heal") return done(cluster.Heal(id));
    if (verb == "pause-replication") return done(cluster.PauseReplication(id));
    return done(cluster.ResumeReplication(id));
  }
  if (verb == "kill-coordinator") {
    if (node)
      return absl::InvalidArgumentError(
          "kill-coordinator takes no node=: it finds the broker");
    auto txn = c.args.find("transactional-id");
    auto group = c.args.find("group");
    if ((txn == c.args.end()) == (group == c.args.end()))
      return absl::InvalidArgumentError(
          "kill-coordinator needs one of transactional-id= or group=");
    const bool is_group = group != c.args.end();
    const std::string key = is_group ? group->second : txn->second;
    c.args.erase(is_group ? group : txn);
    if (absl::Status s = NoneLeft(c); !s.ok()) return s;
    absl::StatusOr<int32_t> killed = cluster.KillCoordinator(
        is_group ? CoordinatorKey::kGroup : CoordinatorKey::kTransaction, key);
    if (!killed.ok()) return killed.status();
    return absl::StrCat("node=", *killed);
  }
  if (verb == "replication-latency") {
    absl::StatusOr<std::optional<int64_t>> ms = TakeInt(c, "ms");
    if (!ms.ok()) return ms.status();
    if (!*ms) return absl::InvalidArgumentError("missing ms=");
    if (absl::Status s = NoneLeft(c); !s.ok()) return s;
    return done(cluster.SetReplicationLatency(id, static_cast<int32_t>(**ms)));
  }
  if (verb == "restart") {
    absl::StatusOr<Broker::RestartMode> mode = TakeMode(c);
    if (!mode.ok()) return mode.status();
    if (absl::Status s = NoneLeft(c); !s.ok()) return s;
    if (node) return done(cluster.Restart(id, *mode));
    // Every broker, one after another.
    for (int32_t b = 1; b <= cluster.size(); ++b)
      if (absl::Status s = cluster.Restart(b, *mode); !s.ok()) return s;
    return std::string();
  }
  if (verb == "create-topic") {
    if (node) return absl::InvalidArgumentError("create-topic takes no node=");
    auto name = c.args.find("name");
    if (name == c.args.end())
      return absl::InvalidArgumentError("missing name=");
    const std::string topic = name->second;
    c.args.erase(name);
    absl::StatusOr<std::optional<int64_t>> partitions =
        TakeInt(c, "partitions");
    if (!partitions.ok()) return partitions.status();
    absl::StatusOr<std::optional<int64_t>> rf =
        TakeInt(c, "replication-factor");
    if (!rf.ok()) return rf.status();
    absl::StatusOr<std::optional<int64_t>> min_isr =
        TakeInt(c, "min-insync-replicas");
    if (!min_isr.ok()) return min_isr.status();
    if (absl::Status s = NoneLeft(c); !s.ok()) return s;
    std::map<std::string, std::string> configs;
    if (*min_isr) configs["min.insync.replicas"] = absl::StrCat(**min_isr);
    return done(cluster.CreateTopic(
        topic, static_cast<int32_t>(partitions->value_or(1)),
        static_cast<int32_t>(rf->value_or(-1)), configs));
  }
  if (verb == "describe-partition") {
    if (node)
      return absl::InvalidArgumentError("describe-partition takes no node=");
    auto topic = c.args.find("topic");
    if (topic == c.args.end())
      return absl::InvalidArgumentError("missing topic=");
    const std::string name = topic->second;
    c.args.erase(topic);
    absl::StatusOr<std::optional<int64_t>> partition = TakeInt(c, "partition");
    if (!partition.ok()) return partition.status();
    if (absl::Status s = NoneLeft(c); !s.ok()) return s;
    absl::StatusOr<PartitionLeadership> p = cluster.DescribePartition(
        name, static_cast<int32_t>(partition->value_or(0)));
    if (!p.ok()) return p.status();
    return absl::StrCat("leader=", p->leader, " epoch=", p->leader_epoch,
                        " replicas=", Nodes(p->replicas),
                        " isr=", Nodes(p->isr));
  }
  return std::nullopt;
}

absl::StatusOr<std::string> Run(Cluster& cluster, AdminCommand& c) {
  absl::StatusOr<std::optional<int64_t>> node = TakeInt(c, "node");
  if (!node.ok()) return node.status();
  if (*node && (**node < 1 || **node > cluster.size()))
    return absl::InvalidArgumentError(absl::StrCat(
        "no broker ", **node, ": node ids are 1..", cluster.size()));
  if (auto result = RunClusterVerb(cluster, c, *node)) return *result;
  if (c.verb == "help") {
    if (absl::Status s = NoneLeft(c); !s.ok()) return s;
    return ClusterAdminHelp();
  }
  if (*node)
    return RunParsedAdminCommand(cluster.broker(static_cast<int32_t>(**node)),
                                 c);
  // A partition's command: its leader answers.
  if (c.verb == "offsets" || c.verb == "describe-producers" ||
      c.verb == "abort-transaction") {
    auto topic = c.args.find("topic");
    if (topic == c.args.end())
      return absl::InvalidArgumentError("missing topic=");
    int64_t partition = 0;
    if (auto p = c.args.find("partition");
        p != c.args.end() && !absl::SimpleAtoi(p->second, &partition))
      return absl::InvalidArgumentError(
          absl::StrCat("partition=", p->second, " is not a number"));
    absl::StatusOr<PartitionLeadership> p = cluster.DescribePartition(
        topic->second, static_cast<int32_t>(partition));
    if (!p.ok()) return p.status();
    if (p->leader < 1)
      return absl::UnavailableError(
          "the partition has no leader (offline); name a replica with node=");
    return RunParsedAdminCommand(cluster.broker(p->leader), c);
  }
  if (c.verb == "history") {
    std::vector<std::string> lines;
    for (int32_t id = 1; id <= cluster.size(); ++id)
      for (const std::string& line : cluster.broker(id).faults().History())
        lines.push_back(absl::StrCat("broker ", id, ": ", line));
    if (absl::Status s = NoneLeft(c); !s.ok()) return s;
    return absl::StrCat(lines.size(), "\n", absl::StrJoin(lines, "\n"),
                        lines.empty() ? "" : "\n", "end");
  }
  // The brokers share one credential store: the first broker changes it
  // for all (running or not).
  if (c.verb == "scram-set" || c.verb == "scram-delete" ||
      c.verb == "scram-list")
    return RunParsedAdminCommand(cluster.broker(1), c);
  // A fault command: every running broker.
  for (int32_t id = 1; id <= cluster.size(); ++id) {
    Broker& b = cluster.broker(id);
    if (!b.running()) continue;
    absl::StatusOr<std::string> result = RunParsedAdminCommand(b, c);
    if (!result.ok()) return result.status();
  }
  return std::string();
}

}  // namespace

std::string RunClusterAdminCommand(Cluster& cluster, std::string_view line) {
  absl::StatusOr<AdminCommand> command = ParseAdminCommand(line);
  if (!command.ok()) return AdminReply(command.status());
  return AdminReply(Run(cluster, *command));
}

std::string ClusterAdminHelp() {
  return "cluster commands: kill node= | kill-coordinator "
         "transactional-id=|group= | restart [node=] "
         "[mode=clean|crash|power-loss] | isolate node= | heal node= | "
         "pause-replication node= | resume-replication node= | "
         "replication-latency node= ms= | create-topic name= [partitions=1] "
         "[replication-factor=-1] [min-insync-replicas=] | "
         "describe-partition topic= [partition=0]; every broker command "
         "takes node=N (without it: every broker, or the partition's "
         "leader). " +
         AdminHelp();
}

}  // namespace exactly::broker
