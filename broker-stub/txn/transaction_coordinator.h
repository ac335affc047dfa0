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
// Runs on the broker's event-loop thread, like everything in BrokerState.
#ifndef EXACTLY_BROKER_TXN_TRANSACTION_COORDINATOR_H_
#define EXACTLY_BROKER_TXN_TRANSACTION_COORDINATOR_H_

#include <asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "cluster/api_error.h"
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

  // Reads every transaction record from the store and starts a new coordinator
  // epoch.
  absl::Status Load();
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
  // that no marker will ever end.
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
  void Persist(const TxnMetadata& m);
  // Bumps the epoch and aborts the open transaction (a new instance, or a
  // timeout).
  void FenceAndAbort(TxnMetadata& m, std::string_view why);
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
  asio::steady_timer timeout_timer_;
  PeerPool peers_;
  MarkerSender marker_sender_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_TXN_TRANSACTION_COORDINATOR_H_
