#include "txn/transaction_coordinator.h"

#include <algorithm>
#include <asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "cluster/appender.h"
#include "cluster/broker_state.h"
#include "cluster/cluster_membership.h"
#include "cluster/coordinator_log.h"
#include "cluster/coordinator_placement.h"
#include "storage/keys.h"
#include "txn/transaction_log.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

constexpr std::string_view kCoordinatorEpochKey = "txn_coordinator_epoch";
// Kafka moves to a new producer id rather than let the epoch reach
// Short.MAX_VALUE.
constexpr int16_t kMaxEpoch = 32766;

ApiError Concurrent(const TxnMetadata& m) {
  return Error(
      ErrorCode::kConcurrentTransactions,
      absl::StrCat("transaction '", m.transactional_id, "' is in state ",
                   std::string(TxnStateName(m.state))));
}

ApiError Fenced(int16_t version, int16_t fenced_code_version,
                std::string message) {
  return Error(version >= fenced_code_version
                   ? ErrorCode::kProducerFenced
                   : ErrorCode::kInvalidProducerEpoch,
               std::move(message));
}

// The controller could not hand out a block of producer ids: retriable.
ApiError NoProducerId() {
  return Error(ErrorCode::kCoordinatorLoadInProgress,
               "no producer id can be had now; retry");
}

}  // namespace

TransactionCoordinator::TransactionCoordinator(
    BrokerState& broker, CompleteGroupOffsets complete_group_offsets)
    : b_(broker),
      complete_group_offsets_(std::move(complete_group_offsets)),
      timeout_timer_(broker.io()),
      peers_(broker.io()),
      marker_sender_(broker, peers_) {}

TransactionCoordinator::~TransactionCoordinator() { timeout_timer_.cancel(); }

absl::Status TransactionCoordinator::Load() {
  Store* store = b_.store();
  if (store == nullptr || b_.controller() != nullptr) return absl::OkStatus();
  absl::Status s = store->ScanPrefix(
      keys::TransactionPrefix(),
      [&](std::string_view key, std::string_view value) {
        std::string id(key.substr(1));
        absl::StatusOr<TxnMetadata> m = DeserializeTxnMetadata(id, value);
        if (!m.ok()) return m.status();
        transactions_[id] = std::move(*m);
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  // Each run of the coordinator has a new epoch; markers carry it.
  if (absl::StatusOr<std::string> v =
          store->Get(keys::Meta(kCoordinatorEpochKey));
      v.ok()) {
    coordinator_epoch_ =
        static_cast<int32_t>(keys::ReadBigEndian(*v, 0, 4)) + 1;
  }
  std::string epoch;
  keys::AppendBigEndian(&epoch, static_cast<uint32_t>(coordinator_epoch_), 4);
  store->Put(keys::Meta(kCoordinatorEpochKey), epoch);
  return absl::OkStatus();
}

void TransactionCoordinator::Start() {
  // On the loop, once it runs: by then a broker of a cluster has its
  // controller, and sends the markers to the partitions' leaders.
  asio::post(b_.io(), [this] {
    for (auto& [id, m] : transactions_) {
      if (m.state == TxnState::kPrepareEpochFence)
        m.state = TxnState::kPrepareAbort;
      if (m.state == TxnState::kPrepareCommit ||
          m.state == TxnState::kPrepareAbort) {
        LogInfo("transaction '", id, "' was left in ",
                std::string(TxnStateName(m.state)),
                ": writing its markers now");
        WriteMarkers(id);
      }
    }
    // This runs before the loop serves any request: commit now, so that the
    // first request already sees what the recovery wrote.
    b_.commits().CommitNow();
  });
  ScheduleTimeoutCheck();
}

const TxnMetadata* TransactionCoordinator::Find(
    const std::string& transactional_id) const {
  auto it = transactions_.find(transactional_id);
  return it == transactions_.end() ? nullptr : &it->second;
}

void TransactionCoordinator::Write(const TxnMetadata& m, Written then) {
  if (b_.controller() != nullptr) return WriteToLog(m, std::move(then));
  if (Store* store = b_.store()) {
    store->Put(keys::Transaction(m.transactional_id), SerializeTxnMetadata(m));
  }
  b_.commits().AfterCommit([then = std::move(then)](
                               const absl::Status& s) mutable {
    then(s.ok()
             ? ApiError{}
             : Error(ErrorCode::kKafkaStorageError, std::string(s.message())));
  });
}

void TransactionCoordinator::WriteToLog(const TxnMetadata& m, Written then) {
  const std::string id = m.transactional_id;
  const int32_t index = CoordinatorPartition(id);
  auto loaded = loaded_.find(index);
  if (loaded == loaded_.end()) {
    return then(
        Error(ErrorCode::kNotCoordinator,
              absl::StrCat("this broker no longer coordinates '", id, "'")));
  }
  const int32_t epoch = loaded->second;
  AppendToCoordinatorLog(
      b_, kTransactionStateTopic, index,
      BuildTransactionLogBatch(m, b_.NowMs()),
      [this, id, index, epoch,
       then = std::move(then)](ErrorCode cause) mutable {
        if (cause == ErrorCode::kNone) return then(ApiError{});
        if (auto l = loaded_.find(index);
            l != loaded_.end() && l->second == epoch)
          RevertFromLog(id);
        then(
            Error(CoordinatorWriteError(cause),
                  absl::StrCat("the state of '", id, "' could not be written: ",
                               std::string(protocol::ErrorCodeName(cause)))));
      });
}

void TransactionCoordinator::RevertFromLog(
    const std::string& transactional_id) {
  Partition* p = b_.FindPartition(kTransactionStateTopic,
                                  CoordinatorPartition(transactional_id));
  if (p == nullptr) return;
  std::map<std::string, TxnMetadata> state = ReplayTransactionLog(p->log());
  auto it = state.find(transactional_id);
  if (it == state.end()) {
    transactions_.erase(transactional_id);
    return;
  }
  TxnMetadata& current = transactions_[transactional_id];
  const int16_t last_epoch = current.last_producer_epoch;
  current = std::move(it->second);
  if (current.state == TxnState::kPrepareEpochFence)
    current.state = TxnState::kPrepareAbort;
  current.last_producer_epoch = last_epoch;
  if (current.InPrepare() && !markers_in_flight_.contains(transactional_id))
    resend_markers_.insert(transactional_id);
}

std::optional<int32_t> TransactionCoordinator::LoadedEpoch(
    int32_t index) const {
  auto it = loaded_.find(index);
  if (it == loaded_.end()) return std::nullopt;
  return it->second;
}

int32_t TransactionCoordinator::CoordinatorEpochOf(
    const std::string& transactional_id) const {
  if (b_.controller() == nullptr) return coordinator_epoch_;
  return LoadedEpoch(CoordinatorPartition(transactional_id)).value_or(0);
}

void TransactionCoordinator::TakeUpLeaderships(const ClusterMetadata& m) {
  LeadershipChanges changes =
      ChangedLeaderships(b_, m, kTransactionStateTopic, loaded_);
  for (int32_t index : changes.unload) UnloadPartition(index);
  for (const auto& [index, epoch] : changes.load) LoadPartition(index, epoch);
}

void TransactionCoordinator::LoadPartition(int32_t index, int32_t epoch) {
  Partition* p = b_.FindPartition(kTransactionStateTopic, index);
  if (p == nullptr) return;
  size_t skipped = 0;
  std::map<std::string, TxnMetadata> state =
      ReplayTransactionLog(p->log(), &skipped);
  if (skipped > 0) {
    LogWarning(std::string(kTransactionStateTopic), "-", index, ": ", skipped,
               " record(s) that do not decode were skipped");
  }
  loaded_[index] = epoch;
  std::vector<std::string> unfinished;
  for (auto& [id, m] : state) {
    if (CoordinatorPartition(id) != index) continue;  // not ours to keep
    if (m.state == TxnState::kPrepareEpochFence)
      m.state = TxnState::kPrepareAbort;
    if (m.InPrepare()) unfinished.push_back(id);
    transactions_[id] = std::move(m);
  }
  if (!state.empty()) {
    LogInfo("coordinating the transactional ids of ",
            std::string(kTransactionStateTopic), "-", index, " at epoch ",
            epoch, ": ", state.size(), " id(s), ", unfinished.size(),
            " left in PrepareCommit/PrepareAbort");
  }
  for (const std::string& id : unfinished) WriteMarkers(id);
}

void TransactionCoordinator::UnloadPartition(int32_t index) {
  for (auto it = transactions_.begin(); it != transactions_.end();) {
    if (CoordinatorPartition(it->first) == index) {
      markers_in_flight_.erase(it->first);
      resend_markers_.erase(it->first);
      it = transactions_.erase(it);
    } else {
      ++it;
    }
  }
  loaded_.erase(index);
  LogDebug("no longer coordinating ", std::string(kTransactionStateTopic), "-",
           index);
}

ApiError TransactionCoordinator::CheckProducer(
    const TxnMetadata* m, int64_t producer_id, int16_t producer_epoch,
    int16_t version, int16_t fenced_code_version) const {
  if (m == nullptr || m->producer_id != producer_id) {
    return Error(ErrorCode::kInvalidProducerIdMapping,
                 absl::StrCat("producer id ", producer_id,
                              " does not belong to this transactional id"));
  }
  if (m->producer_epoch != producer_epoch) {
    return Fenced(version, fenced_code_version,
                  absl::StrCat("producer epoch ", producer_epoch, " of '",
                               m->transactional_id, "' is fenced by epoch ",
                               m->producer_epoch));
  }
  return {};
}

ApiError TransactionCoordinator::VerifyPartitionInTransaction(
    const std::string& transactional_id, int64_t producer_id,
    int16_t producer_epoch, const std::string& topic, int32_t partition) const {
  const TxnMetadata* m = Find(transactional_id);
  // A Produce is answered INVALID_PRODUCER_EPOCH, never PRODUCER_FENCED.
  if (ApiError e = CheckProducer(m, producer_id, producer_epoch,
                                 /*version=*/0, /*fenced_code_version=*/1);
      !e.ok()) {
    return e;
  }
  // A group's offsets partition is in the transaction once AddOffsetsToTxn
  // added the group.
  const bool added =
      topic == kConsumerOffsetsTopic
          ? std::any_of(m->groups.begin(), m->groups.end(),
                        [&](const std::string& g) {
                          return CoordinatorPartition(g) == partition;
                        })
          : m->partitions.contains({topic, partition});
  if (m->state != TxnState::kOngoing || !added) {
    return Error(
        ErrorCode::kInvalidTxnState,
        absl::StrCat(topic, "[", partition,
                     "] is not in an ongoing transaction of '",
                     transactional_id,
                     "' (transaction.partition.verification, "
                     "KIP-890): add it with AddPartitionsToTxn (a group's "
                     "offsets: AddOffsetsToTxn) first"));
  }
  return {};
}

void TransactionCoordinator::BeginIfIdle(TxnMetadata& m) {
  if (m.state == TxnState::kOngoing) return;
  m.state = TxnState::kOngoing;
  m.partitions.clear();
  m.groups.clear();
  m.start_ms = b_.NowMs();
}

void TransactionCoordinator::InitProducerId(
    const std::string& transactional_id, int32_t timeout_ms,
    int64_t expected_producer_id, int16_t expected_epoch, int16_t version,
    absl::AnyInvocable<void(InitResult)> done) {
  auto fail = [&](ApiError error) { done(InitResult{std::move(error)}); };
  if (transactional_id.empty()) {
    return fail(Error(ErrorCode::kInvalidRequest, "empty transactional id"));
  }
  if (timeout_ms <= 0 || timeout_ms > b_.options().transaction_max_timeout_ms) {
    return fail(Error(
        ErrorCode::kInvalidTransactionTimeout,
        absl::StrCat("transaction timeout ", timeout_ms, " ms is not in (0, ",
                     b_.options().transaction_max_timeout_ms, "]")));
  }
  bool has_expected = expected_producer_id >= 0;
  auto it = transactions_.find(transactional_id);
  if (it == transactions_.end()) {
    // A KIP-360 bump for an id the coordinator does not know (it expired) is
    // a new id, as Kafka takes it: a new producer id at epoch 0.
    const int64_t producer_id = b_.AllocateProducerId();
    if (producer_id < 0) return fail(NoProducerId());
    TxnMetadata& m = transactions_[transactional_id];
    m.transactional_id = transactional_id;
    m.producer_id = producer_id;
    m.producer_epoch = 0;
    m.timeout_ms = timeout_ms;
    m.state = TxnState::kEmpty;
    m.last_update_ms = b_.NowMs();
  } else {
    TxnMetadata& m = it->second;
    if (m.InPrepare()) return fail(Concurrent(m));
    auto fenced = [&] {
      return fail(Fenced(
          version, 4,
          absl::StrCat("producer ", expected_producer_id, " epoch ",
                       expected_epoch, " is not the current instance of '",
                       transactional_id, "'")));
    };
    // Kafka's order: the producer id first; the epoch once no transaction is
    // open (an open one is aborted whatever epoch asked).
    if (has_expected && expected_producer_id != m.producer_id) return fenced();
    if (m.state == TxnState::kOngoing) {
      // A new instance while the old one's transaction is open: fence the old
      // one and abort its transaction; the new instance retries and finds it
      // aborted.
      FenceAndAbort(m, "a new producer instance initialised",
                    [done = std::move(done), m_copy = m](ApiError e) mutable {
                      done(InitResult{e.ok() ? Concurrent(m_copy) : e});
                    });
      return;
    }
    // A bump from an epoch that is not the current one is either the retry
    // of a bump whose answer was lost (the epoch it bumped from: the current
    // epoch is answered again) or a fenced instance's.
    bool is_retry = false;
    if (has_expected && expected_epoch != m.producer_epoch) {
      if (m.last_producer_epoch < 0 || expected_epoch != m.last_producer_epoch)
        return fenced();
      is_retry = true;
    }
    if (!is_retry) {
      if (m.producer_epoch >= kMaxEpoch) {
        const int64_t producer_id = b_.AllocateProducerId();
        if (producer_id < 0) return fail(NoProducerId());
        m.producer_id = producer_id;
        m.last_producer_epoch = -1;
        m.producer_epoch = 0;
      } else {
        // Only a KIP-360 bump remembers the epoch it bumped from; a new
        // instance (no id, no epoch) forgets it, so that the instance it fenced
        // cannot pass for a retry and share its epoch.
        m.last_producer_epoch = has_expected ? m.producer_epoch : -1;
        ++m.producer_epoch;
      }
    }
    m.timeout_ms = timeout_ms;
    m.state = TxnState::kEmpty;
    m.partitions.clear();
    m.groups.clear();
    m.last_update_ms = b_.NowMs();
  }
  const TxnMetadata& m = transactions_[transactional_id];
  LogDebug("InitProducerId '", transactional_id, "': producer ", m.producer_id,
           " epoch ", m.producer_epoch);
  Write(m, [done = std::move(done), pid = m.producer_id,
            epoch = m.producer_epoch](ApiError e) mutable {
    if (!e.ok()) return done(InitResult{std::move(e)});
    done(InitResult{{}, pid, epoch});
  });
}

void TransactionCoordinator::AddPartitions(
    const std::string& transactional_id, int64_t producer_id,
    int16_t producer_epoch, int16_t version,
    const std::vector<std::pair<std::string, int32_t>>& partitions,
    absl::AnyInvocable<void(PartitionErrors)> done) {
  PartitionErrors results;
  auto answer_all = [&](const ApiError& error) {
    for (const auto& tp : partitions) results.emplace_back(tp, error);
    done(std::move(results));
  };
  auto it = transactions_.find(transactional_id);
  TxnMetadata* m = it == transactions_.end() ? nullptr : &it->second;
  if (ApiError e = CheckProducer(m, producer_id, producer_epoch, version, 2);
      !e.ok()) {
    return answer_all(e);
  }
  if (m->InPrepare()) return answer_all(Concurrent(*m));
  // Unknown partitions fail the whole request: those get
  // UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED, as Kafka
  // answers.
  bool any_unknown = false;
  for (const auto& [topic, partition] : partitions) {
    if (b_.FindPartition(topic, partition) == nullptr) any_unknown = true;
  }
  if (any_unknown) {
    for (const auto& tp : partitions) {
      bool known = b_.FindPartition(tp.first, tp.second) != nullptr;
      results.emplace_back(tp,
                           known ? Error(ErrorCode::kOperationNotAttempted)
                                 : Error(ErrorCode::kUnknownTopicOrPartition));
    }
    done(std::move(results));
    return;
  }
  BeginIfIdle(*m);
  for (const auto& tp : partitions) m->partitions.insert(tp);
  m->last_update_ms = b_.NowMs();
  for (const auto& tp : partitions) results.emplace_back(tp, ApiError{});
  Write(*m, [done = std::move(done),
             results = std::move(results)](ApiError e) mutable {
    for (auto& r : results) r.second = e;
    done(std::move(results));
  });
}

void TransactionCoordinator::AddOffsets(
    const std::string& transactional_id, int64_t producer_id,
    int16_t producer_epoch, int16_t version, const std::string& group,
    absl::AnyInvocable<void(ApiError)> done) {
  auto it = transactions_.find(transactional_id);
  TxnMetadata* m = it == transactions_.end() ? nullptr : &it->second;
  if (ApiError e = CheckProducer(m, producer_id, producer_epoch, version, 2);
      !e.ok()) {
    return done(std::move(e));
  }
  if (m->InPrepare()) return done(Concurrent(*m));
  if (group.empty())
    return done(Error(ErrorCode::kInvalidGroupId, "empty group id"));
  BeginIfIdle(*m);
  m->groups.insert(group);
  m->last_update_ms = b_.NowMs();
  Write(*m, std::move(done));
}

void TransactionCoordinator::EndTxn(const std::string& transactional_id,
                                    int64_t producer_id, int16_t producer_epoch,
                                    int16_t version, bool commit,
                                    absl::AnyInvocable<void(ApiError)> done) {
  auto it = transactions_.find(transactional_id);
  TxnMetadata* m = it == transactions_.end() ? nullptr : &it->second;
  if (ApiError e = CheckProducer(m, producer_id, producer_epoch, version, 2);
      !e.ok()) {
    return done(std::move(e));
  }
  auto invalid = [&] {
    return Error(
        ErrorCode::kInvalidTxnState,
        absl::StrCat(commit ? "commit" : "abort", " of '", transactional_id,
                     "' in state ", std::string(TxnStateName(m->state))));
  };
  switch (m->state) {
    case TxnState::kOngoing:
      break;
    case TxnState::kCompleteCommit:
      // A retried EndTxn that already succeeded.
      return done(commit ? ApiError{} : invalid());
    case TxnState::kCompleteAbort:
      return done(commit ? invalid() : ApiError{});
    case TxnState::kPrepareCommit:
    case TxnState::kPrepareAbort:
    case TxnState::kPrepareEpochFence:
      // Markers are being written: Kafka answers either outcome
      // CONCURRENT_TRANSACTIONS (its pending transition to Complete*), and
      // the client retries until it sees the completed state.
      return done(Concurrent(*m));
    case TxnState::kEmpty:
    case TxnState::kDead:
      return done(invalid());
  }
  m->state = commit ? TxnState::kPrepareCommit : TxnState::kPrepareAbort;
  m->last_update_ms = b_.NowMs();
  // The client is answered once Prepare* is durable; the markers follow.
  Write(*m,
        [this, done = std::move(done), transactional_id](ApiError e) mutable {
          if (!e.ok()) return done(std::move(e));
          done(ApiError{});
          if (b_.faults().TakeHoldTransactionMarkers()) return;
          WriteMarkers(transactional_id);
        });
}

void TransactionCoordinator::FenceAndAbort(TxnMetadata& m, std::string_view why,
                                           Written then) {
  LogInfo("fencing '", m.transactional_id, "' producer ", m.producer_id,
          " epoch ", m.producer_epoch,
          " and aborting its open transaction: ", std::string(why));
  // Kafka passes through PrepareEpochFence; here the bump and the move to
  // PrepareAbort are one persisted step. The fenced epoch is not remembered:
  // its instance's KIP-360 bump is fenced, not taken for a retry.
  m.last_producer_epoch = -1;
  ++m.producer_epoch;
  m.state = TxnState::kPrepareAbort;
  m.last_update_ms = b_.NowMs();
  Write(m, [this, id = m.transactional_id,
            then = std::move(then)](ApiError e) mutable {
    if (e.ok()) WriteMarkers(id);
    if (then) then(std::move(e));
  });
}

void TransactionCoordinator::WriteMarkers(const std::string& transactional_id) {
  auto it = transactions_.find(transactional_id);
  if (it == transactions_.end() || !it->second.InPrepare()) return;
  TxnMetadata& m = it->second;
  if (b_.controller() != nullptr) return SendMarkers(m);
  bool commit = m.state == TxnState::kPrepareCommit;
  protocol::ControlType type =
      commit ? protocol::ControlType::kCommit : protocol::ControlType::kAbort;
  std::vector<std::pair<std::string, int32_t>> written;
  for (const auto& [topic, index] : m.partitions) {
    Partition* partition = b_.FindPartition(topic, index);
    if (partition == nullptr)
      continue;  // deleted since it joined the transaction
    AppendMarker(b_, *partition, m.producer_id, m.producer_epoch, type,
                 coordinator_epoch_);
    written.emplace_back(topic, index);
  }
  for (const std::string& group : m.groups) {
    if (complete_group_offsets_)
      complete_group_offsets_(group, m.producer_id, commit);
  }
  LogDebug(commit ? "committed" : "aborted", " '", transactional_id,
           "': ", written.size(), " marker(s)");
  Complete(m);
  PublishAppendsAfterCommit(b_, std::move(written));
}

void TransactionCoordinator::SendMarkers(TxnMetadata& m) {
  if (!markers_in_flight_.insert(m.transactional_id).second) return;
  resend_markers_.erase(m.transactional_id);
  const int32_t index = CoordinatorPartition(m.transactional_id);
  const int32_t coordinator_epoch = CoordinatorEpochOf(m.transactional_id);
  TxnMarkers markers{.transactional_id = m.transactional_id,
                     .producer_id = m.producer_id,
                     .producer_epoch = m.producer_epoch,
                     .commit = m.state == TxnState::kPrepareCommit,
                     .coordinator_epoch = coordinator_epoch,
                     .partitions = m.partitions,
                     .still_wanted = [this, index, coordinator_epoch] {
                       auto l = loaded_.find(index);
                       return l != loaded_.end() &&
                              l->second == coordinator_epoch;
                     }};
  // A group's transactional offsets end with a marker on its offsets
  // partition, which its coordinator applies.
  for (const std::string& group : m.groups)
    markers.partitions.emplace(kConsumerOffsetsTopic,
                               CoordinatorPartition(group));
  marker_sender_.Send(
      std::move(markers), [this, id = m.transactional_id, pid = m.producer_id,
                           epoch = m.producer_epoch, state = m.state] {
        markers_in_flight_.erase(id);
        auto it = transactions_.find(id);
        // Nothing else moves a transaction out of Prepare*; checked anyway.
        if (it == transactions_.end() || it->second.state != state ||
            it->second.producer_id != pid || it->second.producer_epoch != epoch)
          return;
        LogDebug("markers of '", id, "' acknowledged by every partition");
        Complete(it->second);
        b_.commits().CommitSoon();
      });
}

void TransactionCoordinator::Complete(TxnMetadata& m) {
  const bool committed = m.state == TxnState::kPrepareCommit;
  m.state = committed ? TxnState::kCompleteCommit : TxnState::kCompleteAbort;
  b_.counters().CountTransactionEnd(committed);
  m.partitions.clear();
  m.groups.clear();
  m.last_update_ms = b_.NowMs();
  // A Complete* that could not be written leaves the transaction in Prepare*
  // (RevertFromLog), and the periodic check sends its markers again.
  Write(m, [](ApiError) {});
}

void TransactionCoordinator::ScheduleTimeoutCheck() {
  timeout_timer_.expires_after(std::chrono::milliseconds(
      b_.options().transaction_abort_check_interval_ms));
  timeout_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    AbortTimedOut();
    ScheduleTimeoutCheck();
  });
}

void TransactionCoordinator::AbortTimedOut() {
  int64_t now = b_.NowMs();
  for (const std::string& id : std::set<std::string>(resend_markers_)) {
    LogInfo("transaction '", id, "': sending its markers again");
    WriteMarkers(id);
  }
  // Collected first: a state write that fails at once changes the map.
  std::vector<std::string> timed_out;
  for (const auto& [id, m] : transactions_) {
    if (m.state == TxnState::kOngoing && m.start_ms + m.timeout_ms <= now)
      timed_out.push_back(id);
  }
  for (const std::string& id : timed_out) {
    auto it = transactions_.find(id);
    if (it == transactions_.end()) continue;
    TxnMetadata& m = it->second;
    LogWarning("transaction '", id, "' exceeded its timeout of ", m.timeout_ms,
               " ms: aborting it and fencing producer ", m.producer_id,
               " epoch ", m.producer_epoch);
    b_.counters().CountTransactionTimeout();
    FenceAndAbort(m, "transaction timeout", nullptr);
  }
}

}  // namespace exactly::broker
