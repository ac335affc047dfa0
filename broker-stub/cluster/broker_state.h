// Everything one broker knows, owned by its event-loop thread: topics and
// partitions, the producer-id allocator, the coordinators, and the store that
// makes them durable. Handlers receive a BrokerState& and run on that thread,
// so none of this takes a lock.
#ifndef EXACTLY_BROKER_CLUSTER_BROKER_STATE_H_
#define EXACTLY_BROKER_CLUSTER_BROKER_STATE_H_

#include <asio/io_context.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/api_error.h"
#include "cluster/commit_pipeline.h"
#include "cluster/dynamic_broker_config.h"
#include "cluster/topic.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/faults.h"
#include "metrics/broker_counters.h"
#include "security/credentials.h"
#include "storage/store.h"
#include "util/frame_arena.h"

namespace exactly::broker {

class Authorizer;
class Controller;
struct ClusterMetadata;
class GroupCoordinator;
class GroupLog;
class ReplicaFetchers;
class LogCleaner;
class TransactionCoordinator;

class BrokerState {
 public:
  // Opens the store (when options.data_dir is set) and loads what it holds.
  static absl::StatusOr<std::unique_ptr<BrokerState>> Open(
      const BrokerOptions& options, asio::io_context& io, Faults& faults,
      rocksdb::Env* env);
  ~BrokerState();

  const BrokerOptions& options() const { return options_; }
  asio::io_context& io() { return io_; }
  Faults& faults() { return faults_; }
  // Requests and transactions counted for the metrics endpoint. The Broker
  // shares its own, which outlive a restart; a state alone has a fresh one.
  BrokerCounters& counters() { return *counters_; }
  void set_counters(std::shared_ptr<BrokerCounters> counters) {
    counters_ = std::move(counters);
  }
  Store* store() { return store_.get(); }  // null in memory
  CommitPipeline& commits() { return *commits_; }
  TopicRegistry& topics() { return topics_; }
  GroupCoordinator& groups() { return *groups_; }
  const GroupCoordinator& groups() const { return *groups_; }
  LogCleaner& cleaner() { return *cleaner_; }
  TransactionCoordinator& transactions() { return *transactions_; }
  const TransactionCoordinator& transactions() const { return *transactions_; }
  // Where request frames are read into; shared with the server.
  FrameArena& frames() { return *frames_; }
  const std::shared_ptr<FrameArena>& shared_frames() const { return frames_; }
  int64_t NowMs() const;
  // The port clients reach this broker on (known once the server is listening).
  void set_advertised_port(uint16_t port) { advertised_port_ = port; }
  uint16_t advertised_port() const { return advertised_port_; }
  // The port of each listener by name ("SASL_SSL"...), the PLAINTEXT one
  // included: a client is told the endpoints of the listener it came through.
  void set_listener_ports(std::map<std::string, int32_t, std::less<>> ports) {
    listener_ports_ = std::move(ports);
  }
  const std::map<std::string, int32_t, std::less<>>& listener_ports() const {
    return listener_ports_;
  }
  uint16_t advertised_port(std::string_view listener) const {
    auto it = listener_ports_.find(listener);
    return it == listener_ports_.end() ? advertised_port_
                                       : static_cast<uint16_t>(it->second);
  }
  // The users SASL accepts. The Broker owns them (credentials set through
  // the API outlive a restart) and a Cluster's brokers share one store.
  CredentialStore& credentials() { return *credentials_; }
  void set_credentials(std::shared_ptr<CredentialStore> credentials) {
    credentials_ = std::move(credentials);
  }
  // The ACL authorizer; null when off (SecurityOptions::authorizer), so
  // that a check costs one branch then. The Broker owns it (ACLs outlive a
  // restart) and a Cluster's brokers share one.
  Authorizer* authorizer() const { return authorizer_.get(); }
  void set_authorizer(std::shared_ptr<Authorizer> authorizer) {
    authorizer_ = std::move(authorizer);
  }
  std::string advertised_host() const {
    return options_.advertised_host.empty() ? options_.host
                                            : options_.advertised_host;
  }

  // Cluster mode: this broker is one of several that follow `controller`
  // (cluster/cluster_membership.h). Null when this broker is the whole
  // cluster, as it is unless started by a Cluster.
  Controller* controller() const { return controller_; }
  void set_controller(Controller* controller);
  // The follower side of replication; null without a controller.
  ReplicaFetchers* replica_fetchers() { return fetchers_.get(); }
  // The controller's decisions as this broker last applied them; null
  // without a controller.
  const ClusterMetadata* cluster_metadata() const { return metadata_.get(); }
  void set_cluster_metadata(std::shared_ptr<const ClusterMetadata> m) {
    metadata_ = std::move(m);
  }

  // Creates a topic after Kafka's checks (name, partition count, configs;
  // in a cluster also the replication factor or the explicit `assignments`,
  // which the controller places). With validate_only nothing changes.
  // Persisted with the next commit.
  ApiError CreateTopic(const std::string& name, int32_t partitions,
                       const std::map<std::string, std::string>& configs,
                       bool validate_only = false,
                       int32_t replication_factor = -1,
                       const std::optional<std::vector<std::vector<int32_t>>>&
                           assignments = std::nullopt);
  // Adds a topic the controller placed to this broker's registry.
  Topic& AddTopic(const std::string& name, int32_t partitions,
                  TopicConfig config);
  // The topic, created with the default partition count if auto-creation allows
  // and asked.
  Topic* FindTopic(std::string_view name, bool auto_create);
  // The dynamic broker configs this broker goes by
  // (cluster/dynamic_broker_config.h); ApplyDynamicBrokerConfigs sets them.
  const DynamicBrokerConfigs& dynamic_configs() const {
    return dynamic_configs_;
  }
  void set_dynamic_configs(DynamicBrokerConfigs configs) {
    dynamic_configs_ = std::move(configs);
  }

  // The topic's min.insync.replicas, or this broker's default when the topic
  // does not set one.
  int32_t MinInsyncReplicas(const Topic& topic) const;
  Partition* FindPartition(std::string_view topic, int32_t partition);

  // A producer id never handed out before, also across restarts with a data
  // dir; -1 when none can be had now (a cluster's controller could not save
  // its next block: the caller answers COORDINATOR_LOAD_IN_PROGRESS, which
  // clients retry, as Kafka's brokers do while they wait for a block).
  int64_t AllocateProducerId();

  // Stages the durable form of an append: the batch and the producer's state,
  // in one write.
  void PersistAppend(const Partition& partition, const StoredBatch& batch);
  void PersistProducer(const Partition& partition, int64_t producer_id);
  void PersistTopic(const Topic& topic);
  void PersistLogStart(const Partition& partition);

  // Copies the batches the logs keep in sparse frame chunks out of them, when
  // the arena says they waste too much (FrameArena::PlanEvacuation). Called
  // after appends.
  void ReleaseSparseFrames();
  LogMemory GetLogMemory() const;

 private:
  BrokerState(const BrokerOptions& options, asio::io_context& io,
              Faults& faults);
  absl::Status Load();
  absl::Status LoadPartition(Partition& partition);

  BrokerOptions options_;
  asio::io_context& io_;
  Faults& faults_;
  std::shared_ptr<BrokerCounters> counters_ =
      std::make_shared<BrokerCounters>();
  std::shared_ptr<FrameArena> frames_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CommitPipeline> commits_;
  TopicRegistry topics_;
  DynamicBrokerConfigs dynamic_configs_;
  std::unique_ptr<TransactionCoordinator> transactions_;
  int64_t next_producer_id_ = 1;
  int64_t producer_id_block_left_ = 0;  // in a cluster
  uint32_t next_topic_id_ = 1;
  uint16_t advertised_port_ = 0;
  std::map<std::string, int32_t, std::less<>> listener_ports_;
  std::shared_ptr<CredentialStore> credentials_;
  std::shared_ptr<Authorizer> authorizer_;
  Controller* controller_ = nullptr;
  std::shared_ptr<const ClusterMetadata> metadata_;
  // In a cluster: where the group coordinator writes (__consumer_offsets).
  std::unique_ptr<GroupLog> group_log_;
  // Declared last, destroyed first: it stages into the store and the commit
  // pipeline.
  std::unique_ptr<GroupCoordinator> groups_;
  // Its connections to the leaders go before anything else.
  std::unique_ptr<ReplicaFetchers> fetchers_;
  std::unique_ptr<LogCleaner> cleaner_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_BROKER_STATE_H_
