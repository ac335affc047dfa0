#include "cluster/broker_state.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cluster/cluster_membership.h"
#include "cluster/consumer_offsets_log.h"
#include "cluster/log_cleaner.h"
#include "controller/controller.h"
#include "group/group_coordinator.h"
#include "replication/replica_fetcher.h"
#include "storage/keys.h"
#include "txn/transaction_coordinator.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

constexpr std::string_view kNextProducerId = "next_producer_id";
constexpr std::string_view kNextTopicId = "next_topic_id";
// Kafka refuses more partitions than this in one topic creation; so do we.
constexpr int32_t kMaxPartitions = 100000;

std::string EncodeInt64(int64_t v) {
  std::string s;
  keys::AppendBigEndian(&s, static_cast<uint64_t>(v), 8);
  return s;
}

absl::StatusOr<int64_t> DecodeInt64(std::string_view s) {
  if (s.size() != 8) return absl::DataLossError("bad int64 value in the store");
  return static_cast<int64_t>(keys::ReadBigEndian(s, 0, 8));
}

}  // namespace

BrokerState::BrokerState(const BrokerOptions& options, asio::io_context& io,
                         Faults& faults)
    : options_(options),
      io_(io),
      faults_(faults),
      frames_(std::make_shared<FrameArena>(FrameArenaOptions{
          .huge_pages = options.frame_huge_pages,
          .max_waste_bytes =
              options.max_frame_waste_bytes < 0
                  ? SIZE_MAX
                  : static_cast<size_t>(options.max_frame_waste_bytes)})),
      credentials_(CredentialStore::WithUsers(options.security.sasl_users)) {}

BrokerState::~BrokerState() = default;

absl::StatusOr<std::unique_ptr<BrokerState>> BrokerState::Open(
    const BrokerOptions& options, asio::io_context& io, Faults& faults,
    rocksdb::Env* env) {
  std::unique_ptr<BrokerState> state(new BrokerState(options, io, faults));
  if (!options.data_dir.empty()) {
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open({options.data_dir, env});
    if (!store.ok()) return store.status();
    state->store_ = std::move(*store);
  }
  state->commits_ =
      std::make_unique<CommitPipeline>(io, state->store_.get(), options.flush);
  // Group offsets staged by transactions are applied or dropped when their
  // marker is written.
  state->transactions_ = std::make_unique<TransactionCoordinator>(
      *state, [groups = &state->groups_](const std::string& group,
                                         int64_t producer_id, bool commit) {
        (*groups)->CompleteTxnOffsets(group, producer_id, commit);
      });
  if (state->store_) {
    absl::Status s = state->Load();
    if (!s.ok()) return s;
  }
  // Groups and their offsets (committed and pending transactional ones), before
  // the transaction coordinator recovers and completes pending transactions.
  state->groups_ = std::make_unique<GroupCoordinator>(
      options, NewEventLoopClock(io), state->store_.get(), *state->commits_);
  if (absl::Status s = state->groups_->Load(); !s.ok()) return s;
  if (absl::Status s = state->transactions_->Load(); !s.ok()) return s;
  state->transactions_->Start();
  state->cleaner_ = std::make_unique<LogCleaner>(*state);
  state->cleaner_->Start();
  return state;
}

int64_t BrokerState::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

ApiError BrokerState::CreateTopic(
    const std::string& name, int32_t partitions,
    const std::map<std::string, std::string>& configs, bool validate_only,
    int32_t replication_factor,
    const std::optional<std::vector<std::vector<int32_t>>>& assignments) {
  if (absl::Status s = ValidateTopicName(name); !s.ok()) {
    return Error(ErrorCode::kInvalidTopicException, std::string(s.message()));
  }
  if (topics_.Find(name) != nullptr) {
    return Error(ErrorCode::kTopicAlreadyExists,
                 absl::StrCat("topic '", name, "' already exists"));
  }
  if (partitions == -1 && !assignments)
    partitions = options_.default_partitions;
  if (assignments) partitions = static_cast<int32_t>(assignments->size());
  if (partitions <= 0 || partitions > kMaxPartitions) {
    return Error(ErrorCode::kInvalidPartitions,
                 absl::StrCat("number of partitions must be in [1, ",
                              kMaxPartitions, "], not ", partitions));
  }
  TopicConfig config;
  for (const auto& [key, value] : configs) {
    if (absl::Status s = config.Set(key, value); !s.ok()) {
      return Error(ErrorCode::kInvalidConfig, std::string(s.message()));
    }
  }
  if (controller_ != nullptr) {
    // The controller places the replicas; every broker, this one at once,
    // then adds the topic as it applies the controller's decision.
    NewTopic request{.name = name,
                     .partitions = assignments ? -1 : partitions,
                     .replication_factor = replication_factor,
                     .assignments = assignments,
                     .configs = configs};
    if (auto it = configs.find("unclean.leader.election.enable");
        it != configs.end())
      request.unclean_leader_election = it->second == "true";
    if (ApiError e = controller_->CreateTopic(request, validate_only); !e.ok())
      return e;
    if (!validate_only) ApplyClusterMetadata(*this, controller_->metadata());
    return {};
  }
  if (validate_only) return {};
  AddTopic(name, partitions, std::move(config));
  return {};
}

void BrokerState::set_controller(Controller* controller) {
  controller_ = controller;
  fetchers_ = controller ? std::make_unique<ReplicaFetchers>(*this) : nullptr;
  // A broker of a cluster keeps its groups in __consumer_offsets.
  if (controller != nullptr) {
    group_log_ = std::make_unique<ConsumerOffsetsLog>(*this);
    groups_->UseLog(group_log_.get());
  }
}

Topic& BrokerState::AddTopic(const std::string& name, int32_t partitions,
                             TopicConfig config) {
  Topic& topic =
      topics_.Add(name, next_topic_id_++, partitions, std::move(config));
  PersistTopic(topic);
  LogInfo("created topic ", name, " with ", partitions, " partition(s)");
  return topic;
}

Topic* BrokerState::FindTopic(std::string_view name, bool auto_create) {
  Topic* topic = topics_.Find(name);
  if (topic != nullptr || !auto_create || !options_.auto_create_topics)
    return topic;
  std::string owned(name);
  if (!CreateTopic(owned, options_.default_partitions, {}).ok()) return nullptr;
  return topics_.Find(name);
}

int32_t BrokerState::MinInsyncReplicas(const Topic& topic) const {
  return topic.config.min_insync_replicas().value_or(
      options_.min_insync_replicas);
}

Partition* BrokerState::FindPartition(std::string_view topic,
                                      int32_t partition) {
  Topic* t = topics_.Find(topic);
  return t == nullptr ? nullptr : t->partition(partition);
}

int64_t BrokerState::AllocateProducerId() {
  if (controller_ != nullptr) {
    // In a cluster every broker hands out ids: each takes blocks from the
    // controller, so no id is given twice.
    if (producer_id_block_left_ == 0) {
      absl::StatusOr<Controller::ProducerIdBlock> block =
          controller_->AllocateProducerIds();
      if (!block.ok()) {
        LogError("no producer id block: ", block.status().message());
        return -1;
      }
      next_producer_id_ = block->first;
      producer_id_block_left_ = block->count;
    }
    --producer_id_block_left_;
    return next_producer_id_++;
  }
  int64_t id = next_producer_id_++;
  if (store_)
    store_->Put(keys::Meta(kNextProducerId), EncodeInt64(next_producer_id_));
  return id;
}

void BrokerState::PersistAppend(const Partition& partition,
                                const StoredBatch& batch) {
  if (!store_) return;
  store_->Put(
      keys::Batch(partition.topic_id(), partition.index(), batch.base_offset()),
      batch.bytes());
  if (batch.header.has_producer_id())
    PersistProducer(partition, batch.header.producer_id);
}

void BrokerState::ReleaseSparseFrames() {
  FrameEvacuation plan = frames_->PlanEvacuation();
  if (plan.empty()) return;
  size_t copied = 0;
  for (const auto& [name, topic] : topics_.all()) {
    for (auto& partition : topic->partitions) {
      copied += partition->log().CopyOut(plan);
    }
  }
  LogDebug("copied ", copied, " bytes of batches out of ", plan.chunks(),
           " sparse frame chunks");
}

LogMemory BrokerState::GetLogMemory() const {
  LogMemory m;
  for (const auto& [name, topic] : topics_.all()) {
    for (const auto& partition : topic->partitions) {
      m.retained_bytes +=
          static_cast<int64_t>(partition->log().size_in_bytes());
    }
  }
  FrameMemory frames = frames_->memory();
  m.frame_bytes = static_cast<int64_t>(frames.mapped);
  m.kept_in_frames = static_cast<int64_t>(frames.kept);
  m.copied_bytes = std::max<int64_t>(0, m.retained_bytes - m.kept_in_frames);
  return m;
}

void BrokerState::PersistProducer(const Partition& partition,
                                  int64_t producer_id) {
  if (!store_) return;
  const ProducerEntry* entry = partition.producers().Find(producer_id);
  std::string key =
      keys::Producer(partition.topic_id(), partition.index(), producer_id);
  if (entry == nullptr) {
    store_->Delete(key);
  } else {
    store_->Put(key, ProducerStateTable::Serialize(*entry));
  }
}

void BrokerState::PersistTopic(const Topic& topic) {
  if (!store_) return;
  store_->Put(keys::Topic(topic.name), SerializeTopic(topic));
  store_->Put(keys::Meta(kNextTopicId), EncodeInt64(next_topic_id_));
}

void BrokerState::PersistLogStart(const Partition& partition) {
  if (!store_) return;
  store_->Put(keys::LogStart(partition.topic_id(), partition.index()),
              EncodeInt64(partition.log().log_start_offset()));
}

absl::Status BrokerState::Load() {
  if (absl::StatusOr<std::string> v = store_->Get(keys::Meta(kNextProducerId));
      v.ok()) {
    absl::StatusOr<int64_t> id = DecodeInt64(*v);
    if (!id.ok()) return id.status();
    next_producer_id_ = *id;
  }
  if (absl::StatusOr<std::string> v = store_->Get(keys::Meta(kNextTopicId));
      v.ok()) {
    absl::StatusOr<int64_t> id = DecodeInt64(*v);
    if (!id.ok()) return id.status();
    next_topic_id_ = static_cast<uint32_t>(*id);
  }
  absl::Status s = store_->ScanPrefix(
      keys::TopicPrefix(), [&](std::string_view key, std::string_view value) {
        absl::StatusOr<TopicRecord> record = DeserializeTopic(value);
        if (!record.ok()) return record.status();
        TopicConfig config;
        for (const auto& [name, v] : record->configs) {
          if (absl::Status cs = config.Set(name, v); !cs.ok()) return cs;
        }
        std::string name(key.substr(1));
        topics_.Add(name, record->id, record->partitions, std::move(config));
        next_topic_id_ = std::max(next_topic_id_, record->id + 1);
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  // Topics without an override inherit the dynamic broker configs kept here.
  ApplyDynamicBrokerConfigs(*this, LoadDynamicBrokerConfigs(*this),
                            /*enforce_retention=*/false);
  int64_t batches = 0;
  for (const auto& [name, topic] : topics_.all()) {
    for (const auto& partition : topic->partitions) {
      if (absl::Status ps = LoadPartition(*partition); !ps.ok()) return ps;
      batches += static_cast<int64_t>(partition->log().batch_count());
    }
  }
  LogInfo("loaded ", topics_.all().size(), " topic(s) and ", batches,
          " batch(es) from ", options_.data_dir,
          store_->direct_flush_writes()
              ? "; flushes write with O_DIRECT"
              : "; flushes write through the page cache (O_DIRECT refused)");
  return absl::OkStatus();
}

absl::Status BrokerState::LoadPartition(Partition& partition) {
  const std::string where =
      absl::StrCat(partition.topic(), "[", partition.index(), "]");
  absl::Status s = store_->ScanPrefix(
      keys::PartitionPrefix('B', partition.topic_id(), partition.index()),
      [&](std::string_view, std::string_view value) {
        absl::StatusOr<protocol::RecordBatchHeader> header =
            protocol::ParseBatchHeader(value);
        if (!header.ok()) {
          return absl::DataLossError(
              absl::StrCat(where, ": ", header.status().message()));
        }
        partition.log().Restore(value, *header);
        // The leader-epoch cache, as the appends built it.
        partition.replication().epochs.Assign(header->partition_leader_epoch,
                                              header->base_offset);
        // Rebuild the transaction index as the appends built it.
        const StoredBatch& stored = partition.log().batches().back();
        // A header-only control batch is a marker the cleaner emptied: its
        // transaction has left the log.
        if (header->is_control() && header->record_count > 0) {
          absl::StatusOr<protocol::ControlType> type =
              protocol::ReadControlType({stored.header, stored.bytes()});
          if (!type.ok())
            return absl::DataLossError(
                absl::StrCat(where, ": ", type.status().message()));
          partition.transactions().OnMarker(
              header->producer_id, *type == protocol::ControlType::kCommit,
              header->base_offset);
        } else if (header->is_transactional() && !header->is_control()) {
          partition.transactions().OnTransactionalBatch(header->producer_id,
                                                        header->base_offset);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  s = store_->ScanPrefix(
      keys::PartitionPrefix('P', partition.topic_id(), partition.index()),
      [&](std::string_view key, std::string_view value) {
        int64_t pid = static_cast<int64_t>(keys::ReadBigEndian(key, 9, 8));
        absl::StatusOr<ProducerEntry> entry =
            ProducerStateTable::Deserialize(value);
        if (!entry.ok()) return entry.status();
        partition.producers().Restore(pid, std::move(*entry));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (absl::StatusOr<std::string> v =
          store_->Get(keys::LogStart(partition.topic_id(), partition.index()));
      v.ok()) {
    absl::StatusOr<int64_t> start = DecodeInt64(*v);
    if (!start.ok()) return start.status();
    partition.log().RestoreLogStartOffset(*start);
    partition.transactions().DeleteBefore(*start);
  }
  return absl::OkStatus();
}

}  // namespace exactly::broker
