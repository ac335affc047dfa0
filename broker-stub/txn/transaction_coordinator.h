// The transaction coordinator: one state machine per transactional.id
// (transaction_metadata.h), the producer ids and epochs that fence zombie
// instances, and the commit/abort markers that end a transaction on every
// partition it wrote to.
//
// The path of a commit, as in Kafka:
//   EndTxn(commit) -> PrepareCommit is persisted -> the client is answered
//     -> a COMMIT marker is appended to every partition of the transaction, and
//     the pending
//        offsets of its consumer groups are applied -> CompleteCommit is
//        persisted
//     -> the markers become visible, the partitions' LSO moves past the
//     transaction.
// A broker that stops between the two persisted steps finishes the markers when
// it starts again (Start()).
//
// In a cluster, the markers go to each partition's leader (and to each group's
// coordinator) over WriteTxnMarkers (txn/marker_sender.h), and CompleteCommit
// is persisted once every one of them acknowledged; until then the
// transaction stays in PrepareCommit, so the producer's next transaction waits
// (CONCURRENT_TRANSACTIONS).
//
// Where the state lives. A single broker keeps it in its store ('X' keys). In
// a cluster it is a record of __transaction_state (txn/transaction_log.h),
// appended to the transactional id's hash partition as an acks=all write: a
// request is answered once every in-sync replica holds the new state. This
// broker coordinates the ids of the partitions it leads: taking up a
// leadership, it replays that partition's log, sends the markers of every
// transaction left in Prepare*, and times out the open ones as before
// (TakeUpLeaderships); giving it up, it forgets them, and requests about them
// get NOT_COORDINATOR. The partition's leader epoch is the coordinator epoch
// its markers carry, so a deposed coordinator's late markers are fenced. A
// state write that fails (no longer leader, too few in-sync replicas, a
// timeout) takes the id's state back from the log, as Kafka's coordinator
// drops a pending state, and answers NOT_COORDINATOR or
// COORDINATOR_NOT_AVAILABLE.
//
// Runs on the broker's event-loop thread, like everything in BrokerState.
#ifndef EXACTLY_BROKER_TXN_TRANSACTION_COORDINATOR_H_
#define EXACTLY_BROKER_TXN_TRANSACTION_COORDINATOR_H_

#include <asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "cluster/api_error.h"
#include "controller/cluster_metadata.h"
#include "peer/peer_pool.h"
#include "txn/marker_sender.h"
#include "txn/transaction_metadata.h"

namespace exactly::broker {

class BrokerState;

class TransactionCoordinator {
 public:
  // Applies (commit) or drops (abort) the transactional offsets a producer
  // staged for a group: the group coordinator's side of a marker on the group's
  // offsets.
  using CompleteGroupOffsets = std::function<void(
      const std::string& group, int64_t producer_id, bool commit)>;

  TransactionCoordinator(BrokerState& broker,
                         CompleteGroupOffsets complete_group_offsets);
  ~TransactionCoordinator();

  // A single broker: reads every transaction record from the store and starts
  // a new coordinator epoch. A broker of a cluster loads its state per
  // partition instead (TakeUpLeaderships).
  absl::Status Load();
  // In a cluster: coordinates the ids of every __transaction_state partition
  // `m` names this broker the leader of (loading the ones it did not lead at
  // that epoch), and forgets those of the partitions it no longer leads.
  void TakeUpLeaderships(const ClusterMetadata& m);
  // The coordinator epoch of __transaction_state partition `index` while this
  // broker coordinates it; nullopt otherwise.
  std::optional<int32_t> LoadedEpoch(int32_t index) const;
  // Finishes the transactions a previous run left in
  // PrepareCommit/PrepareAbort, and starts the periodic check that aborts
  // transactions past their timeout. Call once the partitions and groups are
  // loaded.
  void Start();

  struct InitResult {
    ApiError error;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
  };
  // InitProducerId with a transactional id. `expected_*` are -1 unless the
  // client asks for a KIP-360 epoch bump (v3+). Answers through `done` once the
  // new epoch is durable.
  void InitProducerId(const std::string& transactional_id, int32_t timeout_ms,
                      int64_t expected_producer_id, int16_t expected_epoch,
                      int16_t version,
                      absl::AnyInvocable<void(InitResult)> done);

  using PartitionErrors =
      std::vector<std::pair<std::pair<std::string, int32_t>, ApiError>>;
  void AddPartitions(
      const std::string& transactional_id, int64_t producer_id,
      int16_t producer_epoch, int16_t version,
      const std::vector<std::pair<std::string, int32_t>>& partitions,
      absl::AnyInvocable<void(PartitionErrors)> done);
  void AddOffsets(const std::string& transactional_id, int64_t producer_id,
                  int16_t producer_epoch, int16_t version,
                  const std::string& group,
                  absl::AnyInvocable<void(ApiError)> done);
  void EndTxn(const std::string& transactional_id, int64_t producer_id,
              int16_t producer_epoch, int16_t version, bool commit,
              absl::AnyInvocable<void(ApiError)> done);

  const TxnMetadata* Find(const std::string& transactional_id) const;
  // Every transactional id known, by id (ListTransactions, KIP-664).
  const std::map<std::string, TxnMetadata>& all() const {
    return transactions_;
  }

  // KIP-890 part 1: whether `topic`/`partition` is in the ongoing transaction
  // of `transactional_id` at `producer_id`/`producer_epoch`. A partition
  // leader asks before a transactional batch opens a transaction on the
  // partition, so that a batch no transaction knows of (a zombie's, a retry
  // that outlived its transaction) cannot leave an open transaction there
  // that no marker will ever end. A group coordinator asks the same about a
  // TxnOffsetCommit, with the group's __consumer_offsets partition (in the
  // transaction once AddOffsetsToTxn added a group that hashes to it).
  ApiError VerifyPartitionInTransaction(const std::string& transactional_id,
                                        int64_t producer_id,
                                        int16_t producer_epoch,
                                        const std::string& topic,
                                        int32_t partition) const;
  int32_t coordinator_epoch() const { return coordinator_epoch_; }
  // Connections to the other brokers of the cluster (markers, KIP-890
  // verification of a partition leader's transactional batches).
  PeerPool& peers() { return peers_; }

 private:
  // The checks every call after InitProducerId makes: known id, matching
  // producer id and epoch. `fenced_code_version` is the first version that
  // answers PRODUCER_FENCED.
  ApiError CheckProducer(const TxnMetadata* m, int64_t producer_id,
                         int16_t producer_epoch, int16_t version,
                         int16_t fenced_code_version) const;
  // Moves an Empty/Complete* transaction to Ongoing (a new transaction starts).
  void BeginIfIdle(TxnMetadata& m);
  // Makes `m` durable (a single broker's store, or the __transaction_state
  // log of a cluster, replicated), then calls `then` with the error to answer
  // (none when written). A failed write has taken `m`'s state back.
  using Written = absl::AnyInvocable<void(ApiError)>;
  void Write(const TxnMetadata& m, Written then);
  void WriteToLog(const TxnMetadata& m, Written then);
  // After a failed state write: the id's state as its partition's log has it.
  void RevertFromLog(const std::string& transactional_id);
  void LoadPartition(int32_t index, int32_t epoch);
  void UnloadPartition(int32_t index);
  // The epoch markers of `transactional_id` carry.
  int32_t CoordinatorEpochOf(const std::string& transactional_id) const;
  // Bumps the epoch and aborts the open transaction (a new instance, or a
  // timeout); `then` runs once that is durable (before the markers).
  void FenceAndAbort(TxnMetadata& m, std::string_view why, Written then);
  // Appends the markers of a Prepare* transaction and completes it.
  void WriteMarkers(const std::string& transactional_id);
  // In a cluster: sends them to the partitions' leaders, then completes.
  void SendMarkers(TxnMetadata& m);
  // Prepare* -> Complete*, persisted.
  void Complete(TxnMetadata& m);
  void ScheduleTimeoutCheck();
  void AbortTimedOut();

  BrokerState& b_;
  CompleteGroupOffsets complete_group_offsets_;
  std::map<std::string, TxnMetadata> transactions_;
  int32_t coordinator_epoch_ = 0;
  // In a cluster: the __transaction_state partitions this broker coordinates,
  // with their coordinator epochs (the partitions' leader epochs).
  std::map<int32_t, int32_t> loaded_;
  // Ids whose markers are being sent; and ids whose Complete* write failed,
  // whose markers the periodic check sends again.
  std::set<std::string> markers_in_flight_;
  std::set<std::string> resend_markers_;
  asio::steady_timer timeout_timer_;
  PeerPool peers_;
  MarkerSender marker_sender_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_TXN_TRANSACTION_COORDINATOR_H_
