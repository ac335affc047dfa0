// Several bundled brokers in one process, as one Kafka cluster: each broker
// has its own node id, port, event-loop thread and store; a controller shared
// by them places each partition's replicas, elects leaders and tracks the ISR
// (as Kafka's KRaft controller does), and every broker follows its decisions.
//
//   auto cluster = exactly::broker::Cluster::Start({.brokers = 3});
//   (*cluster)->CreateTopic("orders", 6, 3);   // 6 partitions, 3 replicas
//   std::string servers = (*cluster)->bootstrap_servers();   // all three
//
// docs/architecture.md, "Cluster mode", says how: placement, leaders,
// Metadata, replication (followers truncate to their leader's log, then fetch
// from it), the high watermark from the ISR, acks=all, min.insync.replicas,
// one transaction / group coordinator per key with markers sent to each
// partition's leader, per-broker faults, and, with a data dir, a controller
// whose decisions survive a restart of the whole cluster. Not yet:
// coordinator failover (a coordinator's keys wait for its broker).
#ifndef EXACTLY_BROKER_CLUSTER_H_
#define EXACTLY_BROKER_CLUSTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/broker/broker.h"

namespace exactly::broker {

struct ClusterOptions {
  int32_t brokers = 3;
  // What every broker starts with. Node ids are 1..brokers; a non-zero port
  // is the first broker's, the others' follow it; a data dir gets one folder
  // per broker (broker-1, broker-2, ...) and one for the controller's state
  // (controller/), so a cluster started again on it comes back as it was.
  BrokerOptions broker;
  // default.replication.factor; -1: min(3, brokers), as a test cluster wants.
  int32_t default_replication_factor = -1;
  // unclean.leader.election.enable for topics that do not set it.
  bool unclean_leader_election = false;
};

// Where a partition's replicas are and who leads, as the controller decided.
struct PartitionLeadership {
  int32_t leader = -1;  // -1: offline
  int32_t leader_epoch = -1;
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
};

class MetricsEndpoint;

class Cluster {
 public:
  static absl::StatusOr<std::unique_ptr<Cluster>> Start(ClusterOptions options);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // "127.0.0.1:P1,127.0.0.1:P2,...", every broker.
  std::string bootstrap_servers() const;
  // The same for every broker's listener of `protocol` (empty without one).
  std::string bootstrap_servers(SecurityProtocol protocol) const;
  int32_t size() const { return static_cast<int32_t>(brokers_.size()); }
  // The broker with node id `node_id` (1..size()).
  Broker& broker(int32_t node_id);
  // The port of the cluster's one metrics endpoint (options.broker.
  // metrics_port), whose samples carry broker="<node id>"; -1 when off.
  int32_t metrics_port() const;

  // Creates a topic with `replication_factor` replicas per partition (-1: the
  // default), through a running broker, as CreateTopics does.
  absl::Status CreateTopic(
      std::string_view name, int32_t partitions,
      int32_t replication_factor = -1,
      const std::map<std::string, std::string>& configs = {});
  absl::StatusOr<PartitionLeadership> DescribePartition(
      std::string_view topic, int32_t partition) const;

  // ---- Faults, one broker at a time (docs/faults.md) ----
  // Each is logged in that broker's faults().History(); an unknown node id is
  // InvalidArgument.

  // Stops broker `node_id` as SIGKILL would: no shutdown work, nothing
  // committed that was not already. The controller fences it at once, so its
  // leaderships move to another in-sync replica. Restart() starts it again.
  absl::Status Kill(int32_t node_id);
  // Kills (as Kill) the broker that coordinates the group or transactional
  // id `key` now, as a running broker's FindCoordinator names it, and returns
  // its node id. Unavailable when no broker runs or the coordinator is down.
  absl::StatusOr<int32_t> KillCoordinator(CoordinatorKey kind,
                                          std::string_view key);
  // Restarts broker `node_id` on its port and data dir (see
  // Broker::RestartMode: kPowerLoss drops what it had not fsynced), or starts
  // it again after Kill() or Stop(). It registers with the controller again
  // and catches up as a follower; a restart also ends an isolation.
  absl::Status Restart(int32_t node_id, Broker::RestartMode mode);
  // Cuts broker `node_id` off, both ways: its client and peer connections
  // close, new ones are refused, its own replica fetches stop. The controller
  // fences it (a Kafka broker cut off loses its controller session), so its
  // leaderships move. Heal() reconnects it: it registers again, follows its
  // leaders and rejoins the ISR once it has caught up.
  absl::Status Isolate(int32_t node_id);
  absl::Status Heal(int32_t node_id);
  // Broker `node_id` stops (resumes) fetching from its leaders: it falls out
  // of the ISR after replica.lag.time.max.ms (Faults::PauseReplication). The
  // pause holds from the moment it returns: a fetch already out is dropped
  // with its connection (Faults::PauseReplication alone lets it complete).
  absl::Status PauseReplication(int32_t node_id);
  absl::Status ResumeReplication(int32_t node_id);
  // Broker `node_id` waits `latency_ms` before each replica fetch (0: none).
  absl::Status SetReplicationLatency(int32_t node_id, int32_t latency_ms);

  // Stops every broker. Idempotent.
  absl::Status Stop();

 private:
  Cluster(ClusterOptions options, std::shared_ptr<Controller> controller);
  // The broker `node_id`, or InvalidArgument naming the valid ids.
  absl::StatusOr<Broker*> Find(int32_t node_id);

  ClusterOptions options_;
  std::shared_ptr<Controller> controller_;
  std::vector<std::unique_ptr<Broker>> brokers_;  // node id i at [i - 1]
  // Declared last, destroyed first: its scrapes read the brokers.
  std::unique_ptr<MetricsEndpoint> metrics_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_H_
