// The cluster's controller, as Kafka's KRaft controller: the one place that
// decides where replicas live, which replica leads and which are in sync.
// Brokers register with it and are fenced when they die; topics are created,
// grown and deleted through it; a partition's leader asks it to change the ISR
// (AlterPartition). Every decision becomes a new ClusterMetadata snapshot,
// handed to each subscribed broker, which follows it on its own thread.
//
// With a state folder every decision is on disk before any broker hears of
// it (controller_state_file.h), so a cluster restarted from its data dirs
// finds its topics, leaders, epochs and ISRs again; without one it lives in
// memory.
//
// Thread-safe. Changes are applied one at a time, and listeners are told of
// them in version order; a listener must not call back into the controller
// (brokers post the snapshot to their event loop and return).
#ifndef EXACTLY_BROKER_CONTROLLER_CONTROLLER_H_
#define EXACTLY_BROKER_CONTROLLER_CONTROLLER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cluster/api_error.h"
#include "controller/cluster_metadata.h"

namespace exactly::broker {

struct ControllerOptions {
  // default.replication.factor: for topics created without one (and
  // auto-created topics).
  int32_t default_replication_factor = 1;
  // unclean.leader.election.enable, for topics that do not set it.
  bool unclean_leader_election = false;
  // Where the controller keeps its state; empty: in memory only.
  std::string state_dir;
};

struct NewTopic {
  std::string name;
  int32_t partitions = 1;
  int32_t replication_factor = -1;  // -1: the default
  // Explicit replicas per partition; when set, `partitions` and
  // `replication_factor` must be -1 (as CreateTopics demands).
  std::optional<std::vector<ReplicaList>> assignments;
  std::optional<bool> unclean_leader_election;  // unset: the default
  std::map<std::string, std::string> configs;   // checked by the broker
};

class Controller {
 public:
  using Listener =
      std::function<void(std::shared_ptr<const ClusterMetadata> metadata)>;

  // A new, empty controller; it saves into options.state_dir when that is
  // set (Open also takes up what is saved there).
  explicit Controller(ControllerOptions options = {});
  // A controller that keeps its state in options.state_dir (when set), taking
  // up the state found there. The brokers it names start fenced: each leads
  // and follows again once it registers, with the leaders, epochs and ISRs
  // it had. DataLoss when the state there is damaged.
  static absl::StatusOr<std::shared_ptr<Controller>> Open(
      ControllerOptions options);
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  const ControllerOptions& options() const { return options_; }
  std::shared_ptr<const ClusterMetadata> metadata() const;

  // Called with each new snapshot, and once at once with the current one.
  // Returns a handle for Unsubscribe.
  int Subscribe(Listener listener);
  void Unsubscribe(int handle);

  // A broker (re)joins, unfenced, at host:port. Partitions left without a
  // leader that it can lead (it is in their ISR, or unclean election is on)
  // get it as leader.
  void RegisterBroker(
      int32_t node_id, std::string host, int32_t port,
      std::map<std::string, int32_t, std::less<>> listener_ports = {});
  // A broker stopped, crashed or was cut off: it leaves every ISR, and each
  // partition it led gets the first live in-sync replica as leader (an
  // out-of-sync one only with unclean election), or none: the partition is
  // offline until a replica that may lead returns.
  void FenceBroker(int32_t node_id);
  // Moves leaderships and ISR places away from every broker that has not
  // registered since this controller took up its saved state (a cluster
  // restarted with fewer brokers than before), as FenceBroker does for one.
  void FenceUnregistered();

  ApiError CreateTopic(const NewTopic& topic, bool validate_only = false);
  // Grows `name` to `total` partitions; `assignments` holds the new ones'
  // replicas when given.
  ApiError AddPartitions(
      std::string_view name, int32_t total,
      const std::optional<std::vector<ReplicaList>>& assignments,
      bool validate_only = false);
  void DeleteTopic(std::string_view name);
  void SetUncleanLeaderElection(std::string_view name, bool enabled);
  // Replaces the topic's config overrides (checked by the broker).
  void SetTopicConfigs(std::string_view name,
                       std::map<std::string, std::string> configs);
  // Replaces the dynamic configs of BROKER resource `resource_name` ("": the
  // cluster-wide default; checked by the broker). Every broker takes them up.
  void SetBrokerConfigs(const std::string& resource_name,
                        std::map<std::string, std::string> configs);

  // A block of producer ids no other broker gets, as Kafka's controller hands
  // out AllocateProducerIds blocks: [first, first + count).
  struct ProducerIdBlock {
    int64_t first = 0;
    int64_t count = 0;
  };
  static constexpr int64_t kProducerIdBlockSize = 1000;
  // Fails (and hands out nothing) when the state cannot be saved.
  absl::StatusOr<ProducerIdBlock> AllocateProducerIds();

  // AlterPartition: the leader of a partition, at `leader_epoch` and
  // `partition_epoch`, asks for `isr` as the new in-sync set. Refused with
  // FENCED_LEADER_EPOCH when it no longer leads at that epoch, with
  // INVALID_UPDATE_VERSION when the partition changed since it looked, and
  // with INELIGIBLE_REPLICA when `isr` names a fenced broker or a non-replica
  // (or leaves out the leader). On success `*state` (when given) is the
  // partition's new state.
  ApiError AlterIsr(std::string_view topic, int32_t partition, int32_t leader,
                    int32_t leader_epoch, int32_t partition_epoch,
                    const ReplicaList& isr, PartitionState* state = nullptr);

 private:
  // Saves (when durable) and publishes `next` (version + 1), then tells the
  // listeners. A decision that cannot be saved is not published: the error
  // is returned and the current snapshot stays. Called with change_mu_ held.
  absl::Status Publish(std::shared_ptr<ClusterMetadata> next);
  // Fences `node_id` in `next` (already fenced or not) and moves its
  // leaderships and ISR places. Returns whether anything changed.
  bool MoveAwayFrom(ClusterMetadata& next, int32_t node_id);
  std::shared_ptr<ClusterMetadata> Copy() const;

  const ControllerOptions options_;
  // Serializes changes and their notifications, so listeners see versions in
  // order.
  std::mutex change_mu_;
  mutable std::mutex read_mu_;  // guards current_ only
  std::shared_ptr<const ClusterMetadata> current_;
  std::map<int, Listener> listeners_;
  int next_handle_ = 1;
  int64_t next_producer_id_ = 1;  // guarded by change_mu_
  // Brokers named by the loaded state that have not registered since.
  std::set<int32_t> unregistered_;  // guarded by change_mu_
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CONTROLLER_CONTROLLER_H_
