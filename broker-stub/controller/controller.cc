#include "controller/controller.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "controller/controller_state_file.h"
#include "util/logging.h"

namespace exactly::broker {
namespace {

using protocol::ErrorCode;

bool Alive(const ClusterMetadata& m, int32_t node) {
  const BrokerInfo* b = m.broker(node);
  return b != nullptr && !b->fenced;
}

// The replica that should lead `p` now, or kNoLeader: the first live member
// of the ISR in replica order (the preferred leader first); failing that, with
// unclean election, the first live replica at all.
int32_t ChooseLeader(const ClusterMetadata& m, const PartitionState& p,
                     bool unclean) {
  for (int32_t r : p.replicas)
    if (p.InIsr(r) && Alive(m, r)) return r;
  if (unclean)
    for (int32_t r : p.replicas)
      if (Alive(m, r)) return r;
  return kNoLeader;
}

// Gives `p` a leader if it has none and one may lead now. Returns whether `p`
// changed.
bool ElectIfLeaderless(const ClusterMetadata& m, PartitionState& p,
                       bool unclean) {
  if (p.leader != kNoLeader) return false;
  const int32_t leader = ChooseLeader(m, p, unclean);
  if (leader == kNoLeader) return false;
  if (!p.InIsr(leader)) {
    // An unclean election: the new leader's log is the truth now, and it is
    // the only replica known to hold it.
    LogWarning("unclean leader election: broker ", leader,
               " leads without being in the ISR");
    p.isr = {leader};
  }
  p.leader = leader;
  ++p.leader_epoch;
  ++p.partition_epoch;
  return true;
}

// A new partition on `replicas`: those alive are in sync, the first of them
// leads. Replicas on fenced brokers start out of sync; they join the ISR once
// they return and catch up.
PartitionState NewPartition(const ClusterMetadata& m, ReplicaList replicas) {
  PartitionState p;
  for (int32_t id : replicas)
    if (Alive(m, id)) p.isr.push_back(id);
  p.replicas = std::move(replicas);
  ElectIfLeaderless(m, p, false);
  return p;
}

// Node ids of every registered broker, fenced or not.
std::vector<int32_t> KnownBrokers(const ClusterMetadata& m) {
  std::vector<int32_t> known;
  for (const auto& [id, info] : m.brokers) known.push_back(id);
  return known;
}

// As Kafka's controller: a manual assignment must give each partition a live
// replica to lead it.
ApiError CheckSomeReplicaAlive(const ClusterMetadata& m,
                               const std::vector<ReplicaList>& assignments) {
  for (size_t i = 0; i < assignments.size(); ++i) {
    const ReplicaList& r = assignments[i];
    if (std::none_of(r.begin(), r.end(),
                     [&](int32_t id) { return Alive(m, id); }))
      return Error(ErrorCode::kInvalidReplicaAssignment,
                   absl::StrCat("All brokers specified in the manual "
                                "partition assignment for partition ",
                                i, " are fenced."));
  }
  return {};
}

// What a request that changed nothing because the change could not be saved
// is told (Kafka's controller would fail the write the same way).
ApiError NotSaved(const absl::Status& s) {
  return Error(
      ErrorCode::kUnknownServerError,
      absl::StrCat("the controller could not save the change: ", s.message()));
}

}  // namespace

Controller::Controller(ControllerOptions options)
    : options_(std::move(options)),
      current_(std::make_shared<const ClusterMetadata>()) {}

absl::StatusOr<std::shared_ptr<Controller>> Controller::Open(
    ControllerOptions options) {
  auto controller = std::make_shared<Controller>(std::move(options));
  const std::string& dir = controller->options_.state_dir;
  if (dir.empty()) return controller;
  absl::StatusOr<ControllerState> state = LoadControllerState(dir);
  if (absl::IsNotFound(state.status())) return controller;
  if (!state.ok()) return state.status();
  // No broker is running yet. Each keeps its leaderships and ISR places
  // until it registers (a whole cluster restarting comes back as it was) or
  // FenceUnregistered gives up on it.
  for (auto& [id, info] : state->metadata.brokers) {
    info.fenced = true;
    controller->unregistered_.insert(id);
  }
  controller->next_producer_id_ = state->next_producer_id;
  controller->current_ =
      std::make_shared<const ClusterMetadata>(std::move(state->metadata));
  LogInfo("controller: state of version ", controller->current_->version,
          " loaded from ", dir, ": ", controller->current_->topics.size(),
          " topics, ", controller->current_->brokers.size(), " brokers");
  return controller;
}

std::shared_ptr<const ClusterMetadata> Controller::metadata() const {
  std::lock_guard lock(read_mu_);
  return current_;
}

std::shared_ptr<ClusterMetadata> Controller::Copy() const {
  return std::make_shared<ClusterMetadata>(*metadata());
}

absl::Status Controller::Publish(std::shared_ptr<ClusterMetadata> next) {
  ++next->version;
  if (!options_.state_dir.empty()) {
    // On disk before any broker acts on it: a restart never finds a state
    // older than what a broker already did.
    if (absl::Status s =
            SaveControllerState(options_.state_dir, *next, next_producer_id_);
        !s.ok()) {
      LogError("controller: change of version ", next->version,
               " not made, its state could not be saved: ", s.message());
      return s;
    }
  }
  std::shared_ptr<const ClusterMetadata> published = std::move(next);
  {
    std::lock_guard lock(read_mu_);
    current_ = published;
  }
  for (auto& [handle, listener] : listeners_) listener(published);
  return absl::OkStatus();
}

int Controller::Subscribe(Listener listener) {
  std::lock_guard lock(change_mu_);
  const int handle = next_handle_++;
  listener(metadata());
  listeners_.emplace(handle, std::move(listener));
  return handle;
}

void Controller::Unsubscribe(int handle) {
  std::lock_guard lock(change_mu_);
  listeners_.erase(handle);
}

void Controller::RegisterBroker(
    int32_t node_id, std::string host, int32_t port,
    std::map<std::string, int32_t, std::less<>> listener_ports) {
  std::lock_guard lock(change_mu_);
  auto next = Copy();
  next->brokers[node_id] = BrokerInfo{node_id, std::move(host), port, false,
                                      std::move(listener_ports)};
  for (auto& [name, placement] : next->topics) {
    std::shared_ptr<TopicPlacement> topic;
    for (size_t i = 0; i < placement->partitions.size(); ++i) {
      PartitionState p = placement->partitions[i];
      if (!p.IsReplica(node_id) ||
          !ElectIfLeaderless(*next, p, placement->unclean_leader_election))
        continue;
      if (!topic) topic = std::make_shared<TopicPlacement>(*placement);
      topic->partitions[i] = std::move(p);
    }
    if (topic) placement = std::move(topic);
  }
  if (Publish(std::move(next)).ok()) unregistered_.erase(node_id);
}

void Controller::FenceBroker(int32_t node_id) {
  std::lock_guard lock(change_mu_);
  const std::shared_ptr<const ClusterMetadata> current = metadata();
  const BrokerInfo* broker = current->broker(node_id);
  if (broker == nullptr || broker->fenced) return;
  auto next = Copy();
  MoveAwayFrom(*next, node_id);
  (void)Publish(std::move(next));  // logged there
}

void Controller::FenceUnregistered() {
  std::lock_guard lock(change_mu_);
  if (unregistered_.empty()) return;
  auto next = Copy();
  bool changed = false;
  for (int32_t node_id : unregistered_) {
    LogWarning("controller: broker ", node_id,
               " did not come back; its leaderships move");
    changed |= MoveAwayFrom(*next, node_id);
  }
  unregistered_.clear();
  if (changed) (void)Publish(std::move(next));  // logged there
}

bool Controller::MoveAwayFrom(ClusterMetadata& next, int32_t node_id) {
  auto it = next.brokers.find(node_id);
  if (it == next.brokers.end()) return false;
  bool changed = !it->second.fenced;
  it->second.fenced = true;
  for (auto& [name, placement] : next.topics) {
    std::shared_ptr<TopicPlacement> topic;
    for (size_t i = 0; i < placement->partitions.size(); ++i) {
      PartitionState p = placement->partitions[i];
      if (!p.IsReplica(node_id)) continue;
      const bool led = p.leader == node_id;
      // Kafka never empties an ISR: its last member stays, so that member can
      // lead again cleanly when it returns.
      if (p.InIsr(node_id) && p.isr.size() > 1) {
        std::erase(p.isr, node_id);
        ++p.partition_epoch;
      }
      if (led) {
        p.leader = kNoLeader;
        if (!ElectIfLeaderless(next, p, placement->unclean_leader_election)) {
          // Offline: no one may lead; the epoch still moves, so the deposed
          // leader's epoch is stale when it returns.
          ++p.leader_epoch;
          ++p.partition_epoch;
        }
      }
      if (p.partition_epoch == placement->partitions[i].partition_epoch)
        continue;  // a replica out of sync that led nothing: no change
      if (!topic) topic = std::make_shared<TopicPlacement>(*placement);
      topic->partitions[i] = std::move(p);
      changed = true;
    }
    if (topic) placement = std::move(topic);
  }
  return changed;
}

ApiError Controller::CreateTopic(const NewTopic& request, bool validate_only) {
  std::lock_guard lock(change_mu_);
  auto current = metadata();
  if (current->topic(request.name) != nullptr)
    return Error(ErrorCode::kTopicAlreadyExists,
                 absl::StrCat("Topic '", request.name, "' already exists."));
  const std::vector<int32_t> live = current->LiveBrokers();
  std::vector<ReplicaList> replicas;
  if (request.assignments) {
    if (request.partitions != -1 || request.replication_factor != -1)
      return Error(ErrorCode::kInvalidRequest,
                   "Both numPartitions or replicationFactor and "
                   "replicasAssignments were set. Both cannot be used at the "
                   "same time.");
    if (ApiError e =
            CheckAssignments(*request.assignments, KnownBrokers(*current));
        !e.ok())
      return e;
    if (request.assignments->empty())
      return Error(ErrorCode::kInvalidPartitions,
                   "Number of partitions must be larger than 0.");
    if (ApiError e = CheckSomeReplicaAlive(*current, *request.assignments);
        !e.ok())
      return e;
    replicas = *request.assignments;
  } else {
    if (request.partitions <= 0)
      return Error(ErrorCode::kInvalidPartitions,
                   "Number of partitions must be larger than 0.");
    const int32_t rf = request.replication_factor == -1
                           ? options_.default_replication_factor
                           : request.replication_factor;
    if (ApiError e =
            CheckReplicationFactor(rf, static_cast<int32_t>(live.size()));
        !e.ok())
      return e;
    replicas = PlaceReplicas(request.name, live, 0, request.partitions, rf);
  }
  if (validate_only) return {};
  auto next = Copy();
  auto topic = std::make_shared<TopicPlacement>();
  topic->name = request.name;
  topic->unclean_leader_election = request.unclean_leader_election.value_or(
      options_.unclean_leader_election);
  topic->configs = request.configs;
  for (ReplicaList& r : replicas)
    topic->partitions.push_back(NewPartition(*next, std::move(r)));
  next->topics[request.name] = std::move(topic);
  if (absl::Status s = Publish(std::move(next)); !s.ok()) return NotSaved(s);
  return {};
}

ApiError Controller::AddPartitions(
    std::string_view name, int32_t total,
    const std::optional<std::vector<ReplicaList>>& assignments,
    bool validate_only) {
  std::lock_guard lock(change_mu_);
  auto current = metadata();
  const TopicPlacement* existing = current->topic(name);
  if (existing == nullptr)
    return Error(
        ErrorCode::kUnknownTopicOrPartition,
        absl::StrCat("The topic '", std::string(name), "' does not exist."));
  const int32_t have = static_cast<int32_t>(existing->partitions.size());
  if (total <= have)
    return Error(
        ErrorCode::kInvalidPartitions,
        absl::StrCat("Topic currently has ", have, " partitions, which is ",
                     total < have ? "higher than" : "equal to",
                     " the requested ", total, "."));
  const int32_t rf =
      static_cast<int32_t>(existing->partitions.front().replicas.size());
  std::vector<ReplicaList> replicas;
  if (assignments) {
    if (static_cast<int32_t>(assignments->size()) != total - have)
      return Error(
          ErrorCode::kInvalidReplicaAssignment,
          absl::StrCat("Increasing the number of partitions by ", total - have,
                       " but ", assignments->size(), " assignments provided."));
    if (ApiError e = CheckAssignments(*assignments, KnownBrokers(*current));
        !e.ok())
      return e;
    if (ApiError e = CheckSomeReplicaAlive(*current, *assignments); !e.ok())
      return e;
    for (const ReplicaList& r : *assignments)
      if (static_cast<int32_t>(r.size()) != rf)
        return Error(ErrorCode::kInvalidReplicaAssignment,
                     absl::StrCat("The manual partition assignment includes "
                                  "a partition with ",
                                  r.size(),
                                  " replica(s), but this is not "
                                  "consistent with previous "
                                  "partitions, which have ",
                                  rf, " replica(s)."));
    replicas = *assignments;
  } else {
    const std::vector<int32_t> live = current->LiveBrokers();
    if (ApiError e =
            CheckReplicationFactor(rf, static_cast<int32_t>(live.size()));
        !e.ok())
      return e;
    replicas = PlaceReplicas(name, live, have, total - have, rf);
  }
  if (validate_only) return {};
  auto next = Copy();
  auto topic = std::make_shared<TopicPlacement>(*existing);
  for (ReplicaList& r : replicas)
    topic->partitions.push_back(NewPartition(*next, std::move(r)));
  next->topics.find(name)->second = std::move(topic);
  if (absl::Status s = Publish(std::move(next)); !s.ok()) return NotSaved(s);
  return {};
}

void Controller::DeleteTopic(std::string_view name) {
  std::lock_guard lock(change_mu_);
  if (metadata()->topic(name) == nullptr) return;
  auto next = Copy();
  next->topics.erase(next->topics.find(name));
  (void)Publish(std::move(next));  // logged there
}

void Controller::SetTopicConfigs(std::string_view name,
                                 std::map<std::string, std::string> configs) {
  std::lock_guard lock(change_mu_);
  const TopicPlacement* existing = metadata()->topic(name);
  if (existing == nullptr) return;
  auto next = Copy();
  auto topic = std::make_shared<TopicPlacement>(*existing);
  topic->configs = std::move(configs);
  next->topics.find(name)->second = std::move(topic);
  (void)Publish(std::move(next));  // logged there
}

void Controller::SetBrokerConfigs(const std::string& resource_name,
                                  std::map<std::string, std::string> configs) {
  std::lock_guard lock(change_mu_);
  auto next = Copy();
  if (configs.empty()) {
    next->broker_configs.erase(resource_name);
  } else {
    next->broker_configs[resource_name] = std::move(configs);
  }
  (void)Publish(std::move(next));  // logged there
}

void Controller::SetUncleanLeaderElection(std::string_view name, bool enabled) {
  std::lock_guard lock(change_mu_);
  const TopicPlacement* existing = metadata()->topic(name);
  if (existing == nullptr || existing->unclean_leader_election == enabled)
    return;
  auto next = Copy();
  auto topic = std::make_shared<TopicPlacement>(*existing);
  topic->unclean_leader_election = enabled;
  // Turning it on may bring an offline partition back at once, as Kafka's
  // controller does when the config changes.
  for (PartitionState& p : topic->partitions)
    ElectIfLeaderless(*next, p, enabled);
  next->topics.find(name)->second = std::move(topic);
  (void)Publish(std::move(next));  // logged there
}

absl::StatusOr<Controller::ProducerIdBlock> Controller::AllocateProducerIds() {
  std::lock_guard lock(change_mu_);
  ProducerIdBlock block{next_producer_id_, kProducerIdBlockSize};
  // Saved before it is handed out: after a restart no id of this block is
  // given again.
  if (!options_.state_dir.empty()) {
    if (absl::Status s = SaveControllerState(options_.state_dir, *metadata(),
                                             block.first + block.count);
        !s.ok())
      return s;
  }
  next_producer_id_ += kProducerIdBlockSize;
  return block;
}

ApiError Controller::AlterIsr(std::string_view topic_name, int32_t partition,
                              int32_t leader, int32_t leader_epoch,
                              int32_t partition_epoch, const ReplicaList& isr,
                              PartitionState* state) {
  std::lock_guard lock(change_mu_);
  auto current = metadata();
  const TopicPlacement* existing = current->topic(topic_name);
  const PartitionState* p = current->partition(topic_name, partition);
  if (p == nullptr)
    return Error(ErrorCode::kUnknownTopicOrPartition,
                 absl::StrCat(std::string(topic_name), "-", partition,
                              " does not exist."));
  if (p->leader != leader || p->leader_epoch != leader_epoch)
    return Error(
        ErrorCode::kFencedLeaderEpoch,
        absl::StrCat("broker ", leader, " at leader epoch ", leader_epoch,
                     " does not lead ", std::string(topic_name), "-", partition,
                     " (leader ", p->leader, ", epoch ", p->leader_epoch, ")"));
  if (p->partition_epoch != partition_epoch)
    return Error(ErrorCode::kInvalidUpdateVersion,
                 absl::StrCat("partition epoch ", partition_epoch,
                              " is stale; it is ", p->partition_epoch));
  if (std::find(isr.begin(), isr.end(), leader) == isr.end())
    return Error(ErrorCode::kIneligibleReplica, "the ISR must hold the leader");
  for (int32_t id : isr) {
    if (!p->IsReplica(id) || !Alive(*current, id))
      return Error(ErrorCode::kIneligibleReplica,
                   absl::StrCat("broker ", id, " may not be in the ISR of ",
                                std::string(topic_name), "-", partition));
  }
  auto next = Copy();
  auto topic = std::make_shared<TopicPlacement>(*existing);
  PartitionState& changed = topic->partitions[static_cast<size_t>(partition)];
  // Kept in replica order, so two ISRs of the same members compare equal.
  ReplicaList ordered;
  for (int32_t r : changed.replicas)
    if (std::find(isr.begin(), isr.end(), r) != isr.end()) ordered.push_back(r);
  changed.isr = std::move(ordered);
  ++changed.partition_epoch;
  PartitionState result = changed;
  next->topics.find(topic_name)->second = std::move(topic);
  if (absl::Status s = Publish(std::move(next)); !s.ok()) return NotSaved(s);
  if (state != nullptr) *state = std::move(result);
  return {};
}

}  // namespace exactly::broker
