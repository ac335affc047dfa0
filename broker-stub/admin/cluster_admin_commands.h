// The admin port's commands for a cluster (exactly-broker --brokers N): every
// command of admin_commands.h with an optional node=N, and the per-broker
// faults of a cluster (docs/faults.md):
//
//   kill node=2
//   restart node=2 mode=power-loss
//   isolate node=1          heal node=1
//   pause-replication node=3          replication-latency node=3 ms=200
//   create-topic name=orders partitions=3 replication-factor=3
//   describe-partition topic=orders partition=0
//
// Without node=, a fault command applies to every running broker, a
// partition's command (offsets, describe-producers, abort-transaction) goes
// to that partition's leader, and history lists every broker's faults.
#ifndef EXACTLY_BROKER_ADMIN_CLUSTER_ADMIN_COMMANDS_H_
#define EXACTLY_BROKER_ADMIN_CLUSTER_ADMIN_COMMANDS_H_

#include <string>
#include <string_view>

#include "exactly/broker/cluster.h"

namespace exactly::broker {

// Runs one command line against `cluster` and returns the reply (without a
// trailing newline).
std::string RunClusterAdminCommand(Cluster& cluster, std::string_view line);

// The help text of the cluster's commands.
std::string ClusterAdminHelp();

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_ADMIN_CLUSTER_ADMIN_COMMANDS_H_
