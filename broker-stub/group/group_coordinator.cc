#include "group/group_coordinator.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cluster/coordinator_placement.h"
#include "group/records.h"
#include "storage/keys.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

class PipelineQueue : public CommitQueue {
 public:
  explicit PipelineQueue(CommitPipeline& pipeline) : pipeline_(pipeline) {}
  void AfterCommit(
      absl::AnyInvocable<void(const absl::Status&)> done) override {
    pipeline_.AfterCommit(std::move(done));
  }
  void CommitSoon() override { pipeline_.CommitSoon(); }

 private:
  CommitPipeline& pipeline_;
};

}  // namespace

GroupCoordinator::GroupCoordinator(const BrokerOptions& options,
                                   std::unique_ptr<Clock> clock, Store* store,
                                   CommitPipeline& commits)
    : min_session_timeout_ms_(options.group_min_session_timeout_ms),
      max_session_timeout_ms_(options.group_max_session_timeout_ms),
      clock_(std::move(clock)),
      store_(store),
      pipeline_(std::make_unique<PipelineQueue>(commits)),
      commits_(*pipeline_) {
  config_.initial_rebalance_delay_ms = options.group_initial_rebalance_delay_ms;
}

GroupCoordinator::GroupCoordinator(const BrokerOptions& options,
                                   std::unique_ptr<Clock> clock, Store* store,
                                   CommitQueue& commits)
    : min_session_timeout_ms_(options.group_min_session_timeout_ms),
      max_session_timeout_ms_(options.group_max_session_timeout_ms),
      clock_(std::move(clock)),
      store_(store),
      commits_(commits) {
  config_.initial_rebalance_delay_ms = options.group_initial_rebalance_delay_ms;
}

GroupCoordinator::~GroupCoordinator() = default;

GroupCoordinator::Entry* GroupCoordinator::Find(const std::string& group_id) {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second;
}

const GroupCoordinator::Entry* GroupCoordinator::Find(
    const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second;
}

GroupCoordinator::Entry& GroupCoordinator::GetOrCreate(
    const std::string& group_id) {
  auto it = groups_.find(group_id);
  if (it != groups_.end()) return it->second;
  Entry& e = groups_[group_id];
  // The groups persist themselves through this coordinator.
  GroupPersistence& persistence = *this;
  e.group = std::make_unique<Group>(group_id, config_, *clock_, persistence);
  return e;
}

const Group* GroupCoordinator::FindGroup(const std::string& group_id) const {
  const Entry* e = Find(group_id);
  return e == nullptr ? nullptr : e->group.get();
}

int64_t GroupCoordinator::WallClockMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- Persistence ----

void GroupCoordinator::StoreGroup(const GroupRecord& record,
                                  absl::AnyInvocable<void(ErrorCode)> done) {
  if (store_ != nullptr) {
    store_->Put(keys::Group(record.group_id), EncodeGroupRecord(record));
  }
  std::vector<OffsetsLogRecord> records;
  if (log_ != nullptr) {
    records.push_back({EncodeGroupMetadataKey(record.group_id),
                       EncodeGroupMetadataValue(record, WallClockMs())});
  }
  Write(record.group_id, std::move(records), std::move(done));
}

void GroupCoordinator::Write(const std::string& group,
                             std::vector<OffsetsLogRecord> records,
                             absl::AnyInvocable<void(ErrorCode)> done,
                             int64_t producer_id, int16_t producer_epoch) {
  if (log_ == nullptr) {
    commits_.AfterCommit(
        [done = std::move(done)](const absl::Status& s) mutable {
          // Kafka answers a failed write to its offsets log with
          // NOT_COORDINATOR: the client looks the coordinator up again and
          // retries.
          if (done)
            done(s.ok() ? ErrorCode::kNone : ErrorCode::kNotCoordinator);
        });
    return;
  }
  if (records.empty()) {
    if (done) done(ErrorCode::kNone);
    return;
  }
  log_->Append(CoordinatorPartition(group), std::move(records), producer_id,
               producer_epoch, [done = std::move(done)](ErrorCode e) mutable {
                 if (done) done(e);
               });
}

void GroupCoordinator::PersistOffset(const std::string& group,
                                     const TopicPartition& tp,
                                     const OffsetAndMetadata& offset) {
  if (store_ == nullptr) return;
  store_->Put(keys::GroupOffset(group, tp.first, tp.second),
              EncodeOffsetRecord({group, tp, offset, -1, -1}));
}

void GroupCoordinator::PersistTxnOffset(const std::string& group,
                                        int64_t producer_id,
                                        int16_t producer_epoch,
                                        const TopicPartition& tp,
                                        const OffsetAndMetadata& offset) {
  if (store_ == nullptr) return;
  store_->Put(
      keys::TxnOffset(group, producer_id, tp.first, tp.second),
      EncodeOffsetRecord({group, tp, offset, producer_id, producer_epoch}));
}

absl::Status GroupCoordinator::Load() {
  if (store_ == nullptr) return absl::OkStatus();
  uint64_t max_seq = 0;
  size_t offsets = 0;
  size_t pending = 0;
  absl::Status s = store_->ScanPrefix(
      keys::GroupScanPrefix(), [&](std::string_view, std::string_view value) {
        absl::StatusOr<GroupRecord> record = DecodeGroupRecord(value);
        if (!record.ok()) return record.status();
        GetOrCreate(record->group_id).group->Restore(*record);
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  s = store_->ScanPrefix(
      keys::GroupOffsetScanPrefix(),
      [&](std::string_view, std::string_view value) {
        absl::StatusOr<OffsetRecord> r = DecodeOffsetRecord(value);
        if (!r.ok()) return r.status();
        GetOrCreate(r->group).offsets.Apply(r->tp, r->offset);
        max_seq = std::max(max_seq, r->offset.record_seq);
        ++offsets;
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  s = store_->ScanPrefix(
      keys::TxnOffsetScanPrefix(),
      [&](std::string_view, std::string_view value) {
        absl::StatusOr<OffsetRecord> r = DecodeOffsetRecord(value);
        if (!r.ok()) return r.status();
        GetOrCreate(r->group).offsets.StageTxn(
            r->producer_id, r->producer_epoch, r->tp, r->offset);
        max_seq = std::max(max_seq, r->offset.record_seq);
        ++pending;
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  next_record_seq_ = max_seq + 1;
  if (!groups_.empty()) {
    LogInfo("loaded ", groups_.size(), " group(s), ", offsets,
            " committed offset(s) and ", pending,
            " pending transactional offset(s)");
  }
  return absl::OkStatus();
}

// ---- In a cluster ----

void GroupCoordinator::UseLog(GroupLog* log) {
  log_ = log;
  store_ = nullptr;
  groups_.clear();
}

void GroupCoordinator::LoadPartition(int32_t index, int32_t epoch,
                                     const PartitionLog& log) {
  size_t skipped = 0;
  std::map<std::string, LoadedGroup> loaded = ReplayOffsetsLog(log, &skipped);
  if (skipped > 0) {
    LogWarning(std::string(kConsumerOffsetsTopic), "-", index, ": ", skipped,
               " record(s) that do not decode were skipped");
  }
  loaded_[index] = epoch;
  // Offsets read back carry their log positions as record sequence numbers:
  // this coordinator's next writes must come after them.
  next_record_seq_ = std::max<uint64_t>(
      next_record_seq_, static_cast<uint64_t>(log.log_end_offset()) + 1);
  size_t groups = 0;
  for (auto& [id, g] : loaded) {
    if (CoordinatorPartition(id) != index) continue;  // not ours to keep
    groups_.erase(id);
    Entry& e = GetOrCreate(id);
    if (g.record.has_value()) e.group->Restore(*g.record);
    e.offsets = std::move(g.offsets);
    ++groups;
  }
  if (groups > 0) {
    LogInfo("coordinating the groups of ", std::string(kConsumerOffsetsTopic),
            "-", index, " at epoch ", epoch, ": ", groups, " group(s)");
  }
}

void GroupCoordinator::UnloadPartition(int32_t index) {
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (CoordinatorPartition(it->first) == index) {
      it->second.group->Unload();
      it = groups_.erase(it);
    } else {
      ++it;
    }
  }
  loaded_.erase(index);
  LogDebug("no longer coordinating ", std::string(kConsumerOffsetsTopic), "-",
           index);
}

// ---- Membership ----

void GroupCoordinator::JoinGroup(const std::string& group_id, JoinArgs args,
                                 JoinCallback done) {
  if (group_id.empty()) {
    done(JoinResult::Error(ErrorCode::kInvalidGroupId, args.member_id));
    return;
  }
  if (args.session_timeout_ms < min_session_timeout_ms_ ||
      args.session_timeout_ms > max_session_timeout_ms_) {
    done(JoinResult::Error(ErrorCode::kInvalidSessionTimeout, args.member_id));
    return;
  }
  Entry* e = Find(group_id);
  if (e == nullptr) {
    // A member id for a group that does not exist is a stale one.
    if (!args.member_id.empty()) {
      done(JoinResult::Error(ErrorCode::kUnknownMemberId, args.member_id));
      return;
    }
    e = &GetOrCreate(group_id);
  }
  e->group->Join(std::move(args), std::move(done));
}

void GroupCoordinator::SyncGroup(const std::string& group_id, SyncArgs args,
                                 SyncCallback done) {
  if (group_id.empty()) {
    done(SyncResult::Error(ErrorCode::kInvalidGroupId));
    return;
  }
  Entry* e = Find(group_id);
  if (e == nullptr) {
    done(SyncResult::Error(ErrorCode::kUnknownMemberId));
    return;
  }
  e->group->Sync(std::move(args), std::move(done));
}

ErrorCode GroupCoordinator::Heartbeat(
    const std::string& group_id, const std::string& member_id,
    const std::optional<std::string>& instance_id, int32_t generation) {
  if (group_id.empty()) return ErrorCode::kInvalidGroupId;
  Entry* e = Find(group_id);
  if (e == nullptr) return ErrorCode::kUnknownMemberId;
  return e->group->Heartbeat(member_id, instance_id, generation);
}

LeaveResult GroupCoordinator::LeaveGroup(
    const std::string& group_id, const std::vector<LeavingMember>& members) {
  LeaveResult result;
  if (group_id.empty()) {
    result.error = ErrorCode::kInvalidGroupId;
    return result;
  }
  Entry* e = Find(group_id);
  if (e == nullptr) {
    result.members.assign(members.size(), ErrorCode::kUnknownMemberId);
    return result;
  }
  return e->group->Leave(members);
}

// ---- Offsets ----

void GroupCoordinator::CommitOffsets(
    const std::string& group_id, int32_t generation,
    const std::string& member_id, const std::optional<std::string>& instance_id,
    std::vector<OffsetCommitItem> items,
    absl::AnyInvocable<void(std::vector<OffsetCommitItem>)> done) {
  Entry* e = Find(group_id);
  ErrorCode group_error = ErrorCode::kNone;
  if (e == nullptr) {
    if (generation < 0) {
      // A group that only stores offsets (no group management).
      e = &GetOrCreate(group_id);
    } else {
      // A generation of a group this coordinator does not know.
      group_error = ErrorCode::kIllegalGeneration;
    }
  }
  if (group_error == ErrorCode::kNone) {
    group_error = e->group->ValidateOffsetCommit(generation, member_id,
                                                 instance_id, false);
  }
  if (group_error != ErrorCode::kNone) {
    for (OffsetCommitItem& item : items) {
      if (item.error == ErrorCode::kNone) item.error = group_error;
    }
    done(std::move(items));
    return;
  }
  const int64_t now = WallClockMs();
  std::vector<std::pair<size_t, OffsetAndMetadata>> staged;
  std::vector<OffsetsLogRecord> records;
  for (size_t i = 0; i < items.size(); ++i) {
    OffsetCommitItem& item = items[i];
    if (item.error != ErrorCode::kNone) continue;
    if (item.metadata && item.metadata->size() > kMaxMetadataBytes) {
      item.error = ErrorCode::kOffsetMetadataTooLarge;
      continue;
    }
    OffsetAndMetadata o{item.offset, item.leader_epoch,
                        item.metadata.value_or(""), now, NextRecordSeq()};
    TopicPartition tp{item.topic, item.partition};
    PersistOffset(group_id, tp, o);
    if (log_ != nullptr) {
      records.push_back({EncodeOffsetCommitKey(group_id, tp.first, tp.second),
                         EncodeOffsetCommitValue(o)});
    }
    e->offsets.BeginCommit(tp);
    staged.emplace_back(i, std::move(o));
  }
  Write(group_id, std::move(records),
        [this, group_id, items = std::move(items), staged = std::move(staged),
         done = std::move(done)](ErrorCode written) mutable {
          Entry* e = Find(group_id);
          for (auto& [i, o] : staged) {
            TopicPartition tp{items[i].topic, items[i].partition};
            if (e != nullptr) e->offsets.EndCommit(tp);
            if (written != ErrorCode::kNone) {
              items[i].error = written;
            } else if (e != nullptr) {
              e->offsets.Apply(tp, o);
            }
          }
          done(std::move(items));
        });
}

std::vector<FetchedOffset> GroupCoordinator::FetchOffsets(
    const std::string& group_id,
    const std::optional<std::vector<TopicPartition>>& partitions,
    bool require_stable) const {
  std::vector<FetchedOffset> out;
  const Entry* e = Find(group_id);
  if (e != nullptr && e->group->state() == GroupState::kDead) e = nullptr;
  auto fill = [&](const TopicPartition& tp) {
    FetchedOffset& f = out.emplace_back();
    f.topic = tp.first;
    f.partition = tp.second;
    if (e == nullptr) return;
    if (require_stable && e->offsets.HasPending(tp)) {
      f.error = ErrorCode::kUnstableOffsetCommit;
      return;
    }
    if (const OffsetAndMetadata* o = e->offsets.Find(tp)) {
      f.offset = o->offset;
      f.leader_epoch = o->leader_epoch;
      f.metadata = o->metadata;
    }
  };
  if (partitions.has_value()) {
    for (const TopicPartition& tp : *partitions) fill(tp);
  } else if (e != nullptr) {
    for (const auto& [tp, o] : e->offsets.committed()) fill(tp);
  }
  return out;
}

std::optional<int64_t> GroupCoordinator::CommittedOffset(
    const std::string& group, const std::string& topic,
    int32_t partition) const {
  const Entry* e = Find(group);
  if (e == nullptr) return std::nullopt;
  const OffsetAndMetadata* o = e->offsets.Find({topic, partition});
  if (o == nullptr) return std::nullopt;
  return o->offset;
}

// ---- Transactional offsets ----

ErrorCode GroupCoordinator::ValidateTxnOffsetCommit(
    const std::string& group, int32_t generation, const std::string& member_id,
    const std::optional<std::string>& instance_id) {
  if (group.empty()) return ErrorCode::kInvalidGroupId;
  return GetOrCreate(group).group->ValidateOffsetCommit(
      generation, member_id, instance_id, /*transactional=*/true);
}

ApiError GroupCoordinator::StageTxnOffsets(
    const std::string& group, int64_t producer_id, int16_t producer_epoch,
    const std::vector<TxnOffset>& offsets,
    absl::AnyInvocable<void(ErrorCode)> written) {
  if (group.empty()) {
    return Error(ErrorCode::kInvalidGroupId, "empty group id");
  }
  for (const TxnOffset& o : offsets) {
    if (o.metadata && o.metadata->size() > kMaxMetadataBytes) {
      return Error(ErrorCode::kOffsetMetadataTooLarge,
                   absl::StrCat("metadata of ", o.topic, "[", o.partition,
                                "] is over ", kMaxMetadataBytes, " bytes"));
    }
  }
  Entry& e = GetOrCreate(group);
  if (auto it = e.offsets.pending_txns().find(producer_id);
      it != e.offsets.pending_txns().end() &&
      producer_epoch < it->second.producer_epoch) {
    return Error(
        ErrorCode::kInvalidProducerEpoch,
        absl::StrCat("producer ", producer_id, " epoch ", producer_epoch,
                     " is older than its epoch ", it->second.producer_epoch));
  }
  // What a failed write takes the producer's pending offsets back to.
  std::optional<GroupOffsets::PendingTxn> before;
  if (auto it = e.offsets.pending_txns().find(producer_id);
      it != e.offsets.pending_txns().end())
    before = it->second;
  const int64_t now = WallClockMs();
  std::vector<OffsetsLogRecord> records;
  for (const TxnOffset& o : offsets) {
    TopicPartition tp{o.topic, o.partition};
    OffsetAndMetadata v{o.offset, o.leader_epoch, o.metadata.value_or(""), now,
                        NextRecordSeq()};
    e.offsets.StageTxn(producer_id, producer_epoch, tp, v);
    PersistTxnOffset(group, producer_id, producer_epoch, tp, v);
    if (log_ != nullptr) {
      records.push_back({EncodeOffsetCommitKey(group, tp.first, tp.second),
                         EncodeOffsetCommitValue(v)});
    }
  }
  Write(
      group, std::move(records),
      [this, group, producer_id, before = std::move(before),
       written = std::move(written)](ErrorCode e) mutable {
        if (e != ErrorCode::kNone && log_ != nullptr) {
          if (Entry* entry = Find(group))
            entry->offsets.RestoreTxn(producer_id, std::move(before));
        }
        if (written) written(e);
      },
      producer_id, producer_epoch);
  return {};
}

void GroupCoordinator::CompleteTxnOffsets(const std::string& group,
                                          int64_t producer_id, bool commit) {
  Entry* e = Find(group);
  if (e == nullptr) return;
  std::vector<std::pair<TopicPartition, OffsetAndMetadata>> applied =
      e->offsets.CompleteTxn(producer_id, commit);
  if (store_ != nullptr) {
    store_->DeletePrefix(keys::TxnOffsetProducerPrefix(group, producer_id));
    for (const auto& [tp, o] : applied) PersistOffset(group, tp, o);
  }
  commits_.CommitSoon();
}

std::vector<std::string> GroupCoordinator::GroupsWithPendingTxnOffsets(
    int64_t producer_id) const {
  std::vector<std::string> groups;
  for (const auto& [id, e] : groups_) {
    if (e.offsets.pending_txns().contains(producer_id)) groups.push_back(id);
  }
  return groups;
}

bool GroupCoordinator::HasPendingTxnOffsets(const std::string& group,
                                            const std::string& topic,
                                            int32_t partition) const {
  const Entry* e = Find(group);
  return e != nullptr && e->offsets.HasPendingTxn({topic, partition});
}

void GroupCoordinator::ForgetTopic(const std::string& topic) {
  for (auto& [group_id, e] : groups_) {
    GroupOffsets::Removed removed = e.offsets.RemoveTopic(topic);
    if (log_ != nullptr && !removed.committed.empty()) {
      std::vector<OffsetsLogRecord> tombstones;
      for (const TopicPartition& tp : removed.committed) {
        tombstones.push_back(
            {EncodeOffsetCommitKey(group_id, tp.first, tp.second),
             std::nullopt});
      }
      Write(group_id, std::move(tombstones), nullptr);
    }
    if (store_ == nullptr) continue;
    for (const TopicPartition& tp : removed.committed) {
      store_->Delete(keys::GroupOffset(group_id, tp.first, tp.second));
    }
    for (const auto& [pid, tp] : removed.pending) {
      store_->Delete(keys::TxnOffset(group_id, pid, tp.first, tp.second));
    }
  }
  commits_.CommitSoon();
}

// ---- Admin ----

GroupSummary GroupCoordinator::DescribeGroup(
    const std::string& group_id) const {
  const Entry* e = Find(group_id);
  if (e == nullptr) {
    GroupSummary dead;
    dead.state = std::string(GroupStateName(GroupState::kDead));
    return dead;
  }
  return e->group->Summary();
}

std::vector<GroupOverview> GroupCoordinator::ListGroups(
    const std::vector<std::string>& states) const {
  std::vector<GroupOverview> out;
  for (const auto& [id, e] : groups_) {
    GroupState state = e.group->state();
    if (state == GroupState::kDead) continue;
    std::string name(GroupStateName(state));
    if (!states.empty() &&
        std::none_of(states.begin(), states.end(), [&](const std::string& s) {
          return absl::EqualsIgnoreCase(s, name);
        })) {
      continue;
    }
    out.push_back({id, e.group->protocol_type().value_or(""), name});
  }
  return out;
}

void GroupCoordinator::DeleteGroups(
    const std::vector<std::string>& group_ids,
    absl::AnyInvocable<void(std::vector<ErrorCode>)> done) {
  std::vector<ErrorCode> errors;
  // In a cluster: each deleted group's tombstones, written before answering.
  std::vector<std::pair<std::string, std::vector<OffsetsLogRecord>>> writes;
  for (const std::string& id : group_ids) {
    Entry* e = Find(id);
    if (e == nullptr || e->group->state() == GroupState::kDead) {
      errors.push_back(ErrorCode::kGroupIdNotFound);
      continue;
    }
    if (e->group->state() != GroupState::kEmpty) {
      errors.push_back(ErrorCode::kNonEmptyGroup);
      continue;
    }
    e->group->MarkDead();
    if (log_ != nullptr) {
      auto& [group, tombstones] = writes.emplace_back();
      group = id;
      tombstones.push_back({EncodeGroupMetadataKey(id), std::nullopt});
      for (const auto& [tp, o] : e->offsets.committed()) {
        tombstones.push_back(
            {EncodeOffsetCommitKey(id, tp.first, tp.second), std::nullopt});
      }
    }
    groups_.erase(id);
    if (store_ != nullptr) {
      store_->Delete(keys::Group(id));
      store_->DeletePrefix(keys::GroupOffsetPrefix(id));
      store_->DeletePrefix(keys::TxnOffsetPrefix(id));
    }
    LogInfo("deleted group ", id, " and its offsets");
    errors.push_back(ErrorCode::kNone);
  }
  if (log_ == nullptr) {
    commits_.AfterCommit([errors = std::move(errors), done = std::move(done)](
                             const absl::Status& s) mutable {
      if (!s.ok()) {
        for (ErrorCode& e : errors) {
          if (e == ErrorCode::kNone) e = ErrorCode::kNotCoordinator;
        }
      }
      done(std::move(errors));
    });
    return;
  }
  // Answered once every group's tombstones are written; a group whose write
  // failed gets that error.
  struct Pending {
    std::vector<std::string> ids;
    std::vector<ErrorCode> errors;
    size_t left = 0;
    absl::AnyInvocable<void(std::vector<ErrorCode>)> done;
  };
  auto pending = std::make_shared<Pending>(Pending{
      group_ids, std::move(errors), writes.size() + 1, std::move(done)});
  auto finish_one = [pending] {
    if (--pending->left == 0) pending->done(std::move(pending->errors));
  };
  for (auto& [id, tombstones] : writes) {
    // A copy: clang before 16 cannot capture a structured binding.
    const std::string group = id;
    Write(group, std::move(tombstones),
          [pending, group, finish_one](ErrorCode e) {
            if (e != ErrorCode::kNone) {
              for (size_t i = 0; i < pending->ids.size(); ++i)
                if (pending->ids[i] == group) pending->errors[i] = e;
            }
            finish_one();
          });
  }
  finish_one();
}

void GroupCoordinator::DeleteOffsets(
    const std::string& group_id, std::vector<OffsetDeleteItem> items,
    absl::AnyInvocable<void(ErrorCode, std::vector<OffsetDeleteItem>)> done) {
  // Only the offset commit, offset fetch, describe and delete APIs take ""
  // for a group id (Kafka's GroupCoordinator.isValidGroupId).
  if (group_id.empty()) {
    done(ErrorCode::kInvalidGroupId, {});
    return;
  }
  Entry* e = Find(group_id);
  if (e == nullptr || e->group->state() == GroupState::kDead) {
    done(ErrorCode::kGroupIdNotFound, {});
    return;
  }
  const Group& group = *e->group;
  const bool empty = group.state() == GroupState::kEmpty;
  if (!empty && !group.is_consumer_group()) {
    done(ErrorCode::kNonEmptyGroup, {});
    return;
  }
  std::vector<OffsetsLogRecord> tombstones;
  for (OffsetDeleteItem& item : items) {
    if (item.error != ErrorCode::kNone) continue;
    // Offsets a member consumes from are in use: the group would commit
    // them again.
    if (!empty && group.IsSubscribedToTopic(item.topic)) {
      item.error = ErrorCode::kGroupSubscribedToTopic;
      continue;
    }
    if (!e->offsets.Remove({item.topic, item.partition})) continue;
    if (store_ != nullptr)
      store_->Delete(keys::GroupOffset(group_id, item.topic, item.partition));
    if (log_ != nullptr) {
      tombstones.push_back(
          {EncodeOffsetCommitKey(group_id, item.topic, item.partition),
           std::nullopt});
    }
  }
  Write(group_id, std::move(tombstones),
        [items = std::move(items), done = std::move(done)](
            ErrorCode written) mutable { done(written, std::move(items)); });
}

}  // namespace exactly::broker
