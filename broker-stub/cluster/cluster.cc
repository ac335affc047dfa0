// A cluster of bundled brokers in one process, sharing one controller.
#include "exactly/broker/cluster.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/controller.h"
#include "metrics/broker_sample.h"
#include "metrics/metrics_endpoint.h"
#include "security/authorizer.h"
#include "security/credentials.h"
#include "util/logging.h"

namespace exactly::broker {

Cluster::Cluster(ClusterOptions options, std::shared_ptr<Controller> controller)
    : options_(std::move(options)), controller_(std::move(controller)) {}

Cluster::~Cluster() { (void)Stop(); }

absl::StatusOr<std::unique_ptr<Cluster>> Cluster::Start(
    ClusterOptions options) {
  if (options.brokers < 1)
    return absl::InvalidArgumentError("a cluster needs at least one broker");
  const int32_t replication_factor = options.default_replication_factor == -1
                                         ? std::min(3, options.brokers)
                                         : options.default_replication_factor;
  if (replication_factor < 1 || replication_factor > options.brokers)
    return absl::InvalidArgumentError(
        absl::StrCat("default replication factor ", replication_factor,
                     " is not in [1, ", options.brokers, "]"));
  // With a data dir the controller keeps its decisions beside the brokers'
  // folders, so the cluster restarts as it was.
  absl::StatusOr<std::shared_ptr<Controller>> opened =
      Controller::Open(ControllerOptions{
          .default_replication_factor = replication_factor,
          .unclean_leader_election = options.unclean_leader_election,
          .state_dir = options.broker.data_dir.empty()
                           ? std::string()
                           : (std::filesystem::path(options.broker.data_dir) /
                              "controller")
                                 .string()});
  if (!opened.ok()) return opened.status();
  std::shared_ptr<Controller> controller = std::move(*opened);
  std::unique_ptr<Cluster> cluster(new Cluster(options, controller));
  // One authorizer for all: the brokers are threads of one process, so the
  // simplest correct way to have an ACL apply on every broker at once is to
  // give them one set of ACLs (Kafka replicates them through its metadata
  // log instead).
  std::shared_ptr<Authorizer> authorizer =
      options.broker.security.authorizer
          ? NewAuthorizer(options.broker.security)
          : nullptr;
  // One credential store for all, for the same reason: a credential set
  // through any broker (AlterUserScramCredentials) is checked by every one.
  std::shared_ptr<CredentialStore> credentials =
      CredentialStore::WithUsers(options.broker.security.sasl_users);
  for (int32_t id = 1; id <= options.brokers; ++id) {
    BrokerOptions broker = options.broker;
    broker.node_id = id;
    if (options.broker.port != 0)
      broker.port = static_cast<uint16_t>(options.broker.port + id - 1);
    // A fixed listener port is the first broker's; the others follow it.
    for (ListenerOptions& l : broker.security.listeners) {
      if (l.port != 0) l.port = static_cast<uint16_t>(l.port + id - 1);
    }
    if (!options.broker.data_dir.empty())
      broker.data_dir = (std::filesystem::path(options.broker.data_dir) /
                         absl::StrCat("broker-", id))
                            .string();
    absl::StatusOr<std::unique_ptr<Broker>> started = Broker::StartInCluster(
        std::move(broker), controller, authorizer, credentials);
    if (!started.ok()) return started.status();
    cluster->brokers_.push_back(std::move(*started));
  }
  // Brokers the saved state names that this cluster does not run (it had
  // more before) give up their leaderships now.
  controller->FenceUnregistered();
  if (options.broker.metrics_port >= 0) {
    if (options.broker.metrics_port > 65535)
      return absl::InvalidArgumentError(
          absl::StrCat("metrics port ", options.broker.metrics_port,
                       " is not in [0, 65535]"));
    std::vector<SampleSource> sources;
    for (const auto& b : cluster->brokers_)
      sources.push_back([b = b.get()] { return b->SampleMetrics(); });
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
        MetricsEndpoint::Start(
            options.broker.host,
            static_cast<uint16_t>(options.broker.metrics_port),
            std::move(sources));
    if (!endpoint.ok()) return endpoint.status();
    cluster->metrics_ = std::move(*endpoint);
    LogInfo("cluster metrics on http://", options.broker.host, ":",
            cluster->metrics_->port(), "/metrics");
  }
  return cluster;
}

std::string Cluster::bootstrap_servers() const {
  std::vector<std::string> servers;
  for (const auto& b : brokers_) servers.push_back(b->bootstrap_servers());
  return absl::StrJoin(servers, ",");
}

std::string Cluster::bootstrap_servers(SecurityProtocol protocol) const {
  std::vector<std::string> servers;
  for (const auto& b : brokers_) {
    std::string s = b->bootstrap_servers(protocol);
    if (!s.empty()) servers.push_back(std::move(s));
  }
  return absl::StrJoin(servers, ",");
}

Broker& Cluster::broker(int32_t node_id) {
  return *brokers_.at(static_cast<size_t>(node_id - 1));
}

int32_t Cluster::metrics_port() const {
  return metrics_ ? metrics_->port() : -1;
}

absl::Status Cluster::CreateTopic(
    std::string_view name, int32_t partitions, int32_t replication_factor,
    const std::map<std::string, std::string>& configs) {
  const std::vector<int32_t> live = controller_->metadata()->LiveBrokers();
  if (live.empty()) return absl::UnavailableError("no broker is running");
  return broker(live.front())
      .CreateTopic(name, partitions, replication_factor, configs);
}

absl::StatusOr<PartitionLeadership> Cluster::DescribePartition(
    std::string_view topic, int32_t partition) const {
  // Held while `p` is read: a newer snapshot may replace it meanwhile.
  const std::shared_ptr<const ClusterMetadata> metadata =
      controller_->metadata();
  const PartitionState* p = metadata->partition(topic, partition);
  if (p == nullptr)
    return absl::NotFoundError(
        absl::StrCat("no partition ", std::string(topic), "-", partition));
  return PartitionLeadership{p->leader, p->leader_epoch, p->replicas, p->isr};
}

absl::StatusOr<Broker*> Cluster::Find(int32_t node_id) {
  if (node_id < 1 || node_id > size())
    return absl::InvalidArgumentError(
        absl::StrCat("no broker ", node_id, ": node ids are 1..", size()));
  return &broker(node_id);
}

absl::Status Cluster::Kill(int32_t node_id) {
  absl::StatusOr<Broker*> b = Find(node_id);
  if (!b.ok()) return b.status();
  return (*b)->Kill();
}

absl::StatusOr<int32_t> Cluster::KillCoordinator(CoordinatorKey kind,
                                                 std::string_view key) {
  // Any running broker answers as FindCoordinator does on it.
  for (const auto& b : brokers_) {
    if (!b->running()) continue;
    absl::StatusOr<int32_t> node = b->CoordinatorOf(kind, key);
    // Stopped meanwhile: ask another.
    if (absl::IsFailedPrecondition(node.status())) continue;
    if (!node.ok()) return node.status();
    absl::StatusOr<Broker*> coordinator = Find(*node);
    if (!coordinator.ok()) return coordinator.status();
    (*coordinator)
        ->faults()
        .Record(absl::StrCat(
            "killing the coordinator of ",
            kind == CoordinatorKey::kGroup ? "group '" : "transactional id '",
            std::string(key), "'"));
    if (absl::Status s = (*coordinator)->Kill(); !s.ok()) return s;
    return *node;
  }
  return absl::UnavailableError("no broker of the cluster is running");
}

absl::Status Cluster::Restart(int32_t node_id, Broker::RestartMode mode) {
  absl::StatusOr<Broker*> b = Find(node_id);
  if (!b.ok()) return b.status();
  return (*b)->Restart(mode);
}

absl::Status Cluster::Isolate(int32_t node_id) {
  absl::StatusOr<Broker*> b = Find(node_id);
  if (!b.ok()) return b.status();
  return (*b)->SetIsolated(true);
}

absl::Status Cluster::Heal(int32_t node_id) {
  absl::StatusOr<Broker*> b = Find(node_id);
  if (!b.ok()) return b.status();
  return (*b)->SetIsolated(false);
}

absl::Status Cluster::PauseReplication(int32_t node_id) {
  absl::StatusOr<Broker*> b = Find(node_id);
  if (!b.ok()) return b.status();
  return (*b)->PauseReplication();
}

absl::Status Cluster::ResumeReplication(int32_t node_id) {
  absl::StatusOr<Broker*> b = Find(node_id);
  if (!b.ok()) return b.status();
  (*b)->faults().ResumeReplication();
  return absl::OkStatus();
}

absl::Status Cluster::SetReplicationLatency(int32_t node_id,
                                            int32_t latency_ms) {
  absl::StatusOr<Broker*> b = Find(node_id);
  if (!b.ok()) return b.status();
  (*b)->faults().SetReplicationLatency(latency_ms);
  return absl::OkStatus();
}

absl::Status Cluster::Stop() {
  absl::Status first;
  for (auto& b : brokers_) first.Update(b->Stop());
  return first;
}

}  // namespace exactly::broker
