// exactly._exactly.Broker: the bundled broker in this process, with its
// fault injection; with the option brokers=N above 1, a cluster of N brokers
// (exactly/broker/cluster.h) and its per-broker faults. The brokers serve on
// their own threads and never call back into Python; calls that wait for
// them release the GIL.
#include "exactly/broker/broker.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactly/broker/cluster.h"
#include "natives.h"

namespace exactly::python {
namespace {

using broker::Broker;
using broker::BrokerOptions;
using broker::Cluster;
using broker::ClusterOptions;
using broker::FaultMatch;

template <typename T>
void Set(const py::dict& options, const char* name, T* field) {
  if (options.contains(name) && !options[name].is_none()) {
    *field = options[name].cast<T>();
  }
}

// listeners: {"SASL_SSL": 0, "SSL": 9094} (protocol name -> port, 0 picks
// one); sasl_users: {"alice": "secret"}; the ssl_* files; sasl_mechanisms;
// authorizer, super_users: ["User:admin"], allow_everyone_if_no_acl_found.
void SetSecurity(const py::dict& options, broker::SecurityOptions& s) {
  if (options.contains("listeners") && !options["listeners"].is_none()) {
    for (auto [name, port] : options["listeners"].cast<py::dict>()) {
      const std::string protocol = name.cast<std::string>();
      std::optional<broker::SecurityProtocol> p =
          broker::ParseSecurityProtocol(protocol);
      if (!p) {
        throw py::value_error(
            absl::StrCat("listeners: '", protocol,
                         "' is not one of SSL, SASL_PLAINTEXT, SASL_SSL"));
      }
      s.listeners.push_back({*p, port.cast<uint16_t>()});
    }
  }
  Set(options, "ssl_certificate_file", &s.ssl_certificate_file);
  Set(options, "ssl_private_key_file", &s.ssl_private_key_file);
  Set(options, "ssl_ca_file", &s.ssl_ca_file);
  Set(options, "sasl_users", &s.sasl_users);
  Set(options, "sasl_mechanisms", &s.sasl_mechanisms);
  Set(options, "authorizer", &s.authorizer);
  Set(options, "super_users", &s.super_users);
  Set(options, "allow_everyone_if_no_acl_found",
      &s.allow_everyone_if_no_acl_found);
}

BrokerOptions ToBrokerOptions(const py::dict& options) {
  BrokerOptions o;
  Set(options, "host", &o.host);
  Set(options, "port", &o.port);
  Set(options, "advertised_host", &o.advertised_host);
  Set(options, "data_dir", &o.data_dir);
  Set(options, "node_id", &o.node_id);
  Set(options, "cluster_id", &o.cluster_id);
  Set(options, "default_partitions", &o.default_partitions);
  Set(options, "auto_create_topics", &o.auto_create_topics);
  Set(options, "max_frame_bytes", &o.max_frame_bytes);
  Set(options, "max_connections", &o.max_connections);
  Set(options, "max_in_flight_request_bytes", &o.max_in_flight_request_bytes);
  Set(options, "max_decompressed_batch_bytes", &o.max_decompressed_batch_bytes);
  Set(options, "max_frame_waste_bytes", &o.max_frame_waste_bytes);
  Set(options, "flush_every_messages", &o.flush.every_messages);
  Set(options, "flush_every_ms", &o.flush.every_ms);
  Set(options, "group_initial_rebalance_delay_ms",
      &o.group_initial_rebalance_delay_ms);
  Set(options, "group_min_session_timeout_ms", &o.group_min_session_timeout_ms);
  Set(options, "group_max_session_timeout_ms", &o.group_max_session_timeout_ms);
  Set(options, "transaction_max_timeout_ms", &o.transaction_max_timeout_ms);
  Set(options, "transaction_abort_check_interval_ms",
      &o.transaction_abort_check_interval_ms);
  Set(options, "strict_sequence_reuse", &o.strict_sequence_reuse);
  Set(options, "transaction_partition_verification",
      &o.transaction_partition_verification);
  Set(options, "replica_lag_time_max_ms", &o.replica_lag_time_max_ms);
  Set(options, "min_insync_replicas", &o.min_insync_replicas);
  Set(options, "log_cleaner_backoff_ms", &o.log_cleaner_backoff_ms);
  Set(options, "coordinator_segment_bytes", &o.coordinator_segment_bytes);
  Set(options, "metrics_port", &o.metrics_port);
  Set(options, "verbose", &o.verbose);
  SetSecurity(options, o.security);
  for (auto item : options) {
    static const char* const kKnown[] = {"host",
                                         "port",
                                         "advertised_host",
                                         "data_dir",
                                         "node_id",
                                         "cluster_id",
                                         "default_partitions",
                                         "auto_create_topics",
                                         "max_frame_bytes",
                                         "max_connections",
                                         "max_in_flight_request_bytes",
                                         "max_decompressed_batch_bytes",
                                         "max_frame_waste_bytes",
                                         "flush_every_messages",
                                         "flush_every_ms",
                                         "group_initial_rebalance_delay_ms",
                                         "group_min_session_timeout_ms",
                                         "group_max_session_timeout_ms",
                                         "transaction_max_timeout_ms",
                                         "transaction_abort_check_interval_ms",
                                         "strict_sequence_reuse",
                                         "transaction_partition_verification",
                                         "replica_lag_time_max_ms",
                                         "min_insync_replicas",
                                         "log_cleaner_backoff_ms",
                                         "coordinator_segment_bytes",
                                         "metrics_port",
                                         "brokers",
                                         "default_replication_factor",
                                         "unclean_leader_election",
                                         "verbose",
                                         "listeners",
                                         "ssl_certificate_file",
                                         "ssl_private_key_file",
                                         "ssl_ca_file",
                                         "sasl_users",
                                         "sasl_mechanisms",
                                         "authorizer",
                                         "super_users",
                                         "allow_everyone_if_no_acl_found"};
    const std::string name = item.first.cast<std::string>();
    bool known = false;
    for (const char* k : kKnown) known |= name == k;
    if (!known) {
      throw py::type_error(absl::StrCat("unknown broker option: ", name));
    }
  }
  return o;
}

FaultMatch ToMatch(std::optional<int16_t> api_key,
                   std::optional<std::string> topic,
                   std::optional<int32_t> partition) {
  FaultMatch match;
  match.api_key = api_key;
  match.topic = std::move(topic);
  match.partition = partition;
  return match;
}

py::object OptionalBytes(const std::optional<std::string>& s) {
  if (!s.has_value()) return py::none();
  return py::bytes(*s);
}

Broker::RestartMode ToRestartMode(const std::string& mode) {
  if (mode == "clean") return Broker::RestartMode::kClean;
  if (mode == "crash") return Broker::RestartMode::kCrash;
  if (mode == "power_loss") return Broker::RestartMode::kPowerLoss;
  throw py::value_error(absl::StrCat(
      "restart mode must be 'clean', 'crash' or 'power_loss', not '", mode,
      "'"));
}

// One broker (brokers=1, today's broker on its own) or a Cluster of them.
class PyBroker {
 public:
  explicit PyBroker(const py::dict& options)
      : options_(ToBrokerOptions(options)) {
    Set(options, "brokers", &cluster_options_.brokers);
    if (!options.contains("brokers") || options["brokers"].is_none())
      cluster_options_.brokers = 1;
    Set(options, "default_replication_factor",
        &cluster_options_.default_replication_factor);
    Set(options, "unclean_leader_election",
        &cluster_options_.unclean_leader_election);
    if (cluster_options_.brokers < 1)
      throw py::value_error("brokers must be at least 1");
  }

  ~PyBroker() {
    py::gil_scoped_release release;
    broker_.reset();
    cluster_.reset();
  }

  void Start() {
    if (running()) return;
    if (cluster_options_.brokers == 1) {
      absl::StatusOr<std::unique_ptr<Broker>> started;
      {
        py::gil_scoped_release release;
        started = Broker::Start(options_);
      }
      broker_ = Take(std::move(started));
      // A restart keeps the port, so pin the one picked now.
      options_.port = broker_->port();
      return;
    }
    cluster_options_.broker = options_;
    absl::StatusOr<std::unique_ptr<Cluster>> started;
    {
      py::gil_scoped_release release;
      started = Cluster::Start(cluster_options_);
    }
    cluster_ = Take(std::move(started));
  }

  void Stop() {
    absl::Status status;
    {
      py::gil_scoped_release release;
      if (broker_) status = broker_->Stop();
      if (cluster_) status = cluster_->Stop();
      broker_.reset();
      cluster_.reset();
    }
    Check(status);
  }

  // node None: the broker, or every broker of a cluster one after another.
  void Restart(const std::string& mode, std::optional<int32_t> node) {
    const Broker::RestartMode m = ToRestartMode(mode);
    Running();
    std::vector<int32_t> nodes =
        node ? std::vector<int32_t>{*node} : AllNodes();
    for (int32_t id : nodes) {
      absl::Status status;
      if (cluster_) {
        py::gil_scoped_release release;
        status = cluster_->Restart(id, m);
      } else {
        Broker& b = Node(id);
        py::gil_scoped_release release;
        status = b.Restart(m);
      }
      Check(status);
    }
  }

  bool running() const { return broker_ != nullptr || cluster_ != nullptr; }
  int32_t brokers() const { return cluster_options_.brokers; }
  std::string bootstrap_servers() {
    Running();
    return cluster_ ? cluster_->bootstrap_servers()
                    : broker_->bootstrap_servers();
  }
  // The bootstrap.servers of a security listener ("SASL_SSL", ...).
  std::string listener_bootstrap_servers(const std::string& protocol) {
    Running();
    std::optional<broker::SecurityProtocol> p =
        broker::ParseSecurityProtocol(protocol);
    if (!p) throw py::value_error(absl::StrCat("unknown protocol ", protocol));
    if (*p == broker::SecurityProtocol::kPlaintext) return bootstrap_servers();
    std::string servers = cluster_ ? cluster_->bootstrap_servers(*p)
                                   : broker_->bootstrap_servers(*p);
    if (servers.empty()) {
      throw py::value_error(
          absl::StrCat("the broker has no ", protocol, " listener"));
    }
    return servers;
  }
  uint16_t port() { return Node(std::nullopt).port(); }
  // The Prometheus endpoint's port (one for a whole cluster); -1 when off.
  int32_t metrics_port() {
    Running();
    return cluster_ ? cluster_->metrics_port() : broker_->metrics_port();
  }
  std::vector<uint16_t> ports() {
    std::vector<uint16_t> out;
    for (int32_t id : AllNodes()) out.push_back(Node(id).port());
    return out;
  }
  bool node_running(int32_t node) { return Node(node).running(); }

  void CreateTopic(const std::string& name, int32_t partitions,
                   const std::map<std::string, std::string>& configs,
                   int32_t replication_factor) {
    Running();
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = cluster_ ? cluster_->CreateTopic(name, partitions,
                                                replication_factor, configs)
                        : broker_->CreateTopic(name, partitions,
                                               replication_factor, configs);
    }
    Check(status);
  }

  std::vector<std::string> ListTopics() {
    Broker& b = AnyRunning();
    py::gil_scoped_release release;
    return b.ListTopics();
  }

  // Each batch as a dict, each record as a dict: exactly.testing turns
  // them into dataclasses.
  py::list ReadLog(const std::string& topic, int32_t partition,
                   std::optional<int32_t> node) {
    Broker& b = Replica(topic, partition, node);
    absl::StatusOr<std::vector<broker::LoggedBatch>> batches;
    {
      py::gil_scoped_release release;
      batches = b.ReadLog(topic, partition);
    }
    py::list out;
    for (const broker::LoggedBatch& batch : Take(std::move(batches))) {
      py::list records;
      for (const broker::LoggedRecord& r : batch.records) {
        py::list headers;
        for (const auto& [key, value] : r.headers) {
          headers.append(py::make_tuple(key, OptionalBytes(value)));
        }
        py::dict record;
        record["offset"] = r.offset;
        record["timestamp_ms"] = r.timestamp;
        record["key"] = OptionalBytes(r.key);
        record["value"] = OptionalBytes(r.value);
        record["headers"] = headers;
        records.append(record);
      }
      py::dict d;
      d["base_offset"] = batch.base_offset;
      d["last_offset"] = batch.last_offset;
      d["producer_id"] = batch.producer_id;
      d["producer_epoch"] = batch.producer_epoch;
      d["base_sequence"] = batch.base_sequence;
      d["transactional"] = batch.transactional;
      d["control"] = batch.control;
      d["commit_marker"] = batch.commit_marker;
      d["compression"] = batch.compression;
      d["records"] = records;
      out.append(d);
    }
    return out;
  }

  py::tuple Offsets(const std::string& topic, int32_t partition,
                    std::optional<int32_t> node) {
    Broker& b = Replica(topic, partition, node);
    absl::StatusOr<broker::PartitionOffsets> offsets;
    {
      py::gil_scoped_release release;
      offsets = b.Offsets(topic, partition);
    }
    const broker::PartitionOffsets o = Take(std::move(offsets));
    return py::make_tuple(o.log_start_offset, o.high_watermark,
                          o.last_stable_offset, o.log_end_offset);
  }

  // In a cluster each broker coordinates its own groups: the first that
  // has an offset for it answers.
  std::optional<int64_t> CommittedOffset(const std::string& group,
                                         const std::string& topic,
                                         int32_t partition) {
    Running();
    for (int32_t id : AllNodes()) {
      Broker& b = Node(id);
      if (!b.running()) continue;
      absl::StatusOr<std::optional<int64_t>> offset;
      {
        py::gil_scoped_release release;
        offset = b.CommittedOffset(group, topic, partition);
      }
      std::optional<int64_t> found = Take(std::move(offset));
      if (found) return found;
    }
    return std::nullopt;
  }

  // KIP-664's abort of a hanging transaction: an ABORT marker on one
  // partition. Returns the marker's offset.
  int64_t AbortTransaction(const std::string& topic, int32_t partition,
                           int64_t producer_id) {
    Broker& b = Replica(topic, partition, std::nullopt);
    absl::StatusOr<int64_t> offset;
    {
      py::gil_scoped_release release;
      offset = b.AbortTransaction(topic, partition, producer_id);
    }
    return Take(std::move(offset));
  }

  // SASL SCRAM credentials; a cluster's brokers share them, so node 1
  // changes them for all.
  void SetScramCredential(const std::string& user, const std::string& password,
                          const std::string& mechanism, int32_t iterations) {
    Broker& b = Node(std::nullopt);
    absl::Status s;
    {
      py::gil_scoped_release release;  // PBKDF2: thousands of HMACs
      s = b.SetScramCredential(user, mechanism, password, iterations);
    }
    Check(s);
  }
  void DeleteScramCredential(const std::string& user,
                             const std::string& mechanism) {
    Check(Node(std::nullopt).DeleteScramCredential(user, mechanism));
  }
  // [(user, mechanism, iterations)], by user then mechanism.
  std::vector<std::tuple<std::string, std::string, int32_t>>
  ScramCredentials() {
    std::vector<std::tuple<std::string, std::string, int32_t>> out;
    for (const broker::ScramCredentialInfo& i :
         Node(std::nullopt).ScramCredentials())
      out.emplace_back(i.user, i.mechanism, i.iterations);
    return out;
  }

  // (leader, leader_epoch, replicas, isr) as the controller decided.
  py::tuple DescribePartition(const std::string& topic, int32_t partition) {
    Cluster& c = RunningCluster("describe_partition");
    absl::StatusOr<broker::PartitionLeadership> p =
        c.DescribePartition(topic, partition);
    broker::PartitionLeadership l = Take(std::move(p));
    return py::make_tuple(l.leader, l.leader_epoch, l.replicas, l.isr);
  }

  // ---- Faults; node None: every running broker ----
  void FailRequests(std::optional<int16_t> api_key,
                    std::optional<std::string> topic,
                    std::optional<int32_t> partition, int16_t error_code,
                    int count, std::optional<int32_t> node) {
    for (Broker* b : Targets(node))
      b->faults().FailRequests(ToMatch(api_key, topic, partition), error_code,
                               count);
  }
  void DropProduceResponses(int count, int one_in,
                            std::optional<std::string> topic,
                            std::optional<int32_t> partition,
                            std::optional<int32_t> node) {
    for (Broker* b : Targets(node))
      b->faults().DropProduceResponses(count, one_in,
                                       ToMatch(std::nullopt, topic, partition));
  }
  void DropProduceResponsesKeepOpen(int count, int one_in,
                                    std::optional<std::string> topic,
                                    std::optional<int32_t> partition,
                                    std::optional<int32_t> node) {
    for (Broker* b : Targets(node))
      b->faults().DropProduceResponsesKeepOpen(
          count, one_in, ToMatch(std::nullopt, topic, partition));
  }
  void AddLatency(int32_t latency_ms, std::optional<int16_t> api_key,
                  std::optional<std::string> topic,
                  std::optional<int32_t> partition,
                  std::optional<int32_t> node) {
    for (Broker* b : Targets(node))
      b->faults().AddLatency(latency_ms, ToMatch(api_key, topic, partition));
  }
  void CloseAllConnections(std::optional<int32_t> node) {
    for (Broker* b : Targets(node)) b->faults().CloseAllConnections();
  }
  void BrokerDown(int32_t duration_ms, std::optional<int32_t> node) {
    for (Broker* b : Targets(node)) b->faults().BrokerDown(duration_ms);
  }
  void HoldTransactionMarkers(int count, std::optional<int32_t> node) {
    for (Broker* b : Targets(node)) b->faults().HoldTransactionMarkers(count);
  }
  void HoldMarkers(std::optional<int32_t> node) {
    for (Broker* b : Targets(node)) b->faults().HoldMarkers();
  }
  void ReleaseMarkers(std::optional<int32_t> node) {
    for (Broker* b : Targets(node)) b->faults().ReleaseMarkers();
  }
  void ClearFaults(std::optional<int32_t> node) {
    for (Broker* b : Targets(node)) b->faults().Clear();
  }
  // A cluster's lines name their broker ("broker 2: ...").
  std::vector<std::string> History(std::optional<int32_t> node) {
    Running();
    std::vector<std::string> out;
    for (int32_t id : node ? std::vector<int32_t>{*node} : AllNodes()) {
      for (std::string& line : Node(id).faults().History())
        out.push_back(cluster_ ? absl::StrCat("broker ", id, ": ", line)
                               : std::move(line));
    }
    return out;
  }

  // ---- A cluster's per-broker faults ----
  void Kill(int32_t node) { OnNode("kill", &Cluster::Kill, node); }
  // The node id killed: the coordinator of the group or transactional id.
  int32_t KillCoordinator(std::optional<std::string> transactional_id,
                          std::optional<std::string> group) {
    if (transactional_id.has_value() == group.has_value())
      throw py::value_error(
          "kill_coordinator takes one of transactional_id= or group=");
    Cluster& c = RunningCluster("kill_coordinator");
    absl::StatusOr<int32_t> killed;
    {
      py::gil_scoped_release release;
      killed = group ? c.KillCoordinator(broker::CoordinatorKey::kGroup, *group)
                     : c.KillCoordinator(broker::CoordinatorKey::kTransaction,
                                         *transactional_id);
    }
    return Take(std::move(killed));
  }
  void Isolate(int32_t node) { OnNode("isolate", &Cluster::Isolate, node); }
  void Heal(int32_t node) { OnNode("heal", &Cluster::Heal, node); }
  void PauseReplication(int32_t node) {
    OnNode("pause_replication", &Cluster::PauseReplication, node);
  }
  void ResumeReplication(int32_t node) {
    Check(RunningCluster("resume_replication").ResumeReplication(node));
  }
  void SetReplicationLatency(int32_t node, int32_t latency_ms) {
    Check(RunningCluster("set_replication_latency")
              .SetReplicationLatency(node, latency_ms));
  }

 private:
  // Runs a fault that waits for broker threads (a stop, a reconnect) with
  // the GIL released, so that Python threads of the test keep running.
  void OnNode(const char* what, absl::Status (Cluster::*fault)(int32_t),
              int32_t node) {
    Cluster& c = RunningCluster(what);
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = (c.*fault)(node);
    }
    Check(status);
  }
  void Running() {
    if (!running()) {
      Check(absl::FailedPreconditionError(
          "the broker is not running: call start() (or use it as a context "
          "manager)"));
    }
  }
  Cluster& RunningCluster(const char* what) {
    Running();
    if (!cluster_)
      Check(absl::FailedPreconditionError(absl::StrCat(
          what,
          " is a cluster's fault: start the broker with brokers=2 or "
          "more")));
    return *cluster_;
  }
  std::vector<int32_t> AllNodes() {
    std::vector<int32_t> ids;
    for (int32_t id = 1; id <= (cluster_ ? cluster_->size() : 1); ++id)
      ids.push_back(id);
    return ids;
  }
  // Broker `node` (1..brokers); None: the single broker, or node 1.
  Broker& Node(std::optional<int32_t> node) {
    Running();
    const int32_t size = cluster_ ? cluster_->size() : 1;
    const int32_t id = node.value_or(1);
    if (id < 1 || id > size)
      throw py::value_error(
          absl::StrCat("no broker ", id, ": node ids are 1..", size));
    return cluster_ ? cluster_->broker(id) : *broker_;
  }
  Broker& AnyRunning() {
    for (int32_t id : AllNodes())
      if (Node(id).running()) return Node(id);
    Check(absl::UnavailableError("no broker of the cluster is running"));
    return Node(1);
  }
  // Broker `node`, or the partition's leader (a cluster).
  Broker& Replica(const std::string& topic, int32_t partition,
                  std::optional<int32_t> node) {
    if (node || !cluster_) return Node(node);
    absl::StatusOr<broker::PartitionLeadership> p =
        cluster_->DescribePartition(topic, partition);
    if (p.ok() && p->leader >= 1) return Node(p->leader);
    if (!p.ok() && absl::IsNotFound(p.status()))
      Check(p.status());  // no such partition, as a single broker says
    Check(absl::UnavailableError(
        absl::StrCat(topic, "-", partition,
                     " has no leader (offline): name a replica with node=")));
    return Node(1);
  }
  // The brokers a fault applies to: `node`, or every running one.
  std::vector<Broker*> Targets(std::optional<int32_t> node) {
    if (node) return {&Node(node)};
    std::vector<Broker*> out;
    for (int32_t id : AllNodes())
      if (Node(id).running() || !cluster_) out.push_back(&Node(id));
    return out;
  }

  BrokerOptions options_;
  ClusterOptions cluster_options_;
  std::unique_ptr<Broker> broker_;    // brokers=1
  std::unique_ptr<Cluster> cluster_;  // brokers>1
};

}  // namespace

void RegisterBroker(py::module_& m) {
  const auto node = py::arg("node") = py::none();
  py::class_<PyBroker>(m, "Broker")
      .def(py::init<const py::dict&>(), py::arg("options"))
      .def("start", &PyBroker::Start)
      .def("stop", &PyBroker::Stop)
      .def("restart", &PyBroker::Restart, py::arg("mode"), node)
      .def_property_readonly("running", &PyBroker::running)
      .def_property_readonly("brokers", &PyBroker::brokers)
      .def_property_readonly("bootstrap_servers", &PyBroker::bootstrap_servers)
      .def("listener_bootstrap_servers", &PyBroker::listener_bootstrap_servers,
           py::arg("protocol"))
      .def_property_readonly("port", &PyBroker::port)
      .def_property_readonly("metrics_port", &PyBroker::metrics_port)
      .def("ports", &PyBroker::ports)
      .def("node_running", &PyBroker::node_running, py::arg("node"))
      .def("create_topic", &PyBroker::CreateTopic, py::arg("name"),
           py::arg("partitions"), py::arg("configs"),
           py::arg("replication_factor") = -1)
      .def("list_topics", &PyBroker::ListTopics)
      .def("read_log", &PyBroker::ReadLog, py::arg("topic"),
           py::arg("partition"), node)
      .def("offsets", &PyBroker::Offsets, py::arg("topic"),
           py::arg("partition"), node)
      .def("committed_offset", &PyBroker::CommittedOffset, py::arg("group"),
           py::arg("topic"), py::arg("partition"))
      .def("abort_transaction", &PyBroker::AbortTransaction, py::arg("topic"),
           py::arg("partition"), py::arg("producer_id"))
      .def("describe_partition", &PyBroker::DescribePartition, py::arg("topic"),
           py::arg("partition"))
      .def("set_scram_credential", &PyBroker::SetScramCredential,
           py::arg("user"), py::arg("password"), py::arg("mechanism"),
           py::arg("iterations"))
      .def("delete_scram_credential", &PyBroker::DeleteScramCredential,
           py::arg("user"), py::arg("mechanism"))
      .def("scram_credentials", &PyBroker::ScramCredentials)
      .def("fail_requests", &PyBroker::FailRequests, py::arg("api_key"),
           py::arg("topic"), py::arg("partition"), py::arg("error_code"),
           py::arg("count"), node)
      .def("drop_produce_responses", &PyBroker::DropProduceResponses,
           py::arg("count"), py::arg("one_in"), py::arg("topic"),
           py::arg("partition"), node)
      .def("drop_produce_responses_keep_open",
           &PyBroker::DropProduceResponsesKeepOpen, py::arg("count"),
           py::arg("one_in"), py::arg("topic"), py::arg("partition"), node)
      .def("add_latency", &PyBroker::AddLatency, py::arg("latency_ms"),
           py::arg("api_key"), py::arg("topic"), py::arg("partition"), node)
      .def("close_all_connections", &PyBroker::CloseAllConnections, node)
      .def("broker_down", &PyBroker::BrokerDown, py::arg("duration_ms"), node)
      .def("hold_transaction_markers", &PyBroker::HoldTransactionMarkers,
           py::arg("count"), node)
      .def("hold_markers", &PyBroker::HoldMarkers, node)
      .def("release_markers", &PyBroker::ReleaseMarkers, node)
      .def("clear_faults", &PyBroker::ClearFaults, node)
      .def("fault_history", &PyBroker::History, node)
      .def("kill", &PyBroker::Kill, py::arg("node"))
      .def("kill_coordinator", &PyBroker::KillCoordinator,
           py::arg("transactional_id"), py::arg("group"))
      .def("isolate", &PyBroker::Isolate, py::arg("node"))
      .def("heal", &PyBroker::Heal, py::arg("node"))
      .def("pause_replication", &PyBroker::PauseReplication, py::arg("node"))
      .def("resume_replication", &PyBroker::ResumeReplication, py::arg("node"))
      .def("set_replication_latency", &PyBroker::SetReplicationLatency,
           py::arg("node"), py::arg("latency_ms"));
}

}  // namespace exactly::python
