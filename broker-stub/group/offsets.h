// A group's offsets: the committed ones, the regular commits still being
// written, and the transactional ones (TxnOffsetCommit) held per producer
// until their transaction ends.
//
// Every offset carries the sequence number of the write that recorded it (in
// Kafka, the position of its record in __consumer_offsets): when a
// transaction commits, each of its offsets replaces the committed one only if
// it was recorded later, so that a regular commit made after the
// TxnOffsetCommit is kept (GroupMetadata.completePendingTxnOffsetCommit).
#ifndef EXACTLY_BROKER_GROUP_OFFSETS_H_
#define EXACTLY_BROKER_GROUP_OFFSETS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace exactly::broker {

using TopicPartition = std::pair<std::string, int32_t>;

struct OffsetAndMetadata {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;  // a null metadata is kept as "", as Kafka does
  int64_t commit_timestamp_ms = 0;
  uint64_t record_seq = 0;  // order of the write that recorded it
};

class GroupOffsets {
 public:
  const std::map<TopicPartition, OffsetAndMetadata>& committed() const {
    return committed_;
  }
  const OffsetAndMetadata* Find(const TopicPartition& tp) const;

  // Makes `offset` the committed offset of `tp` unless one recorded later is
  // already there; returns whether it did.
  bool Apply(const TopicPartition& tp, const OffsetAndMetadata& offset);
  bool Remove(const TopicPartition& tp) { return committed_.erase(tp) > 0; }

  // A regular commit written to the store and not yet durable: OffsetFetch
  // with RequireStable treats the partition as unstable meanwhile.
  void BeginCommit(const TopicPartition& tp) { ++in_flight_[tp]; }
  void EndCommit(const TopicPartition& tp);

  // Transactional offsets of a producer, invisible until CompleteTxn.
  struct PendingTxn {
    int16_t producer_epoch = -1;
    std::map<TopicPartition, OffsetAndMetadata> offsets;
  };
  const std::map<int64_t, PendingTxn>& pending_txns() const {
    return pending_txns_;
  }
  void StageTxn(int64_t producer_id, int16_t producer_epoch,
                const TopicPartition& tp, const OffsetAndMetadata& offset);
  // Commit: applies the producer's offsets (each unless a later record is in
  // place) and returns the ones applied. Abort: drops them. Either way the
  // producer has nothing pending afterwards.
  std::vector<std::pair<TopicPartition, OffsetAndMetadata>> CompleteTxn(
      int64_t producer_id, bool commit);

  // Puts a producer's pending offsets back as they were (none when nullopt):
  // a TxnOffsetCommit whose write failed.
  void RestoreTxn(int64_t producer_id, std::optional<PendingTxn> before);

  bool HasPendingTxn(const TopicPartition& tp) const;
  // A regular commit in flight or a transactional offset pending.
  bool HasPending(const TopicPartition& tp) const {
    return in_flight_.contains(tp) || HasPendingTxn(tp);
  }

  // Forgets every committed and pending offset of `topic`. Returns the
  // committed partitions and the (producer, partition) pending ones removed.
  struct Removed {
    std::vector<TopicPartition> committed;
    std::vector<std::pair<int64_t, TopicPartition>> pending;
  };
  Removed RemoveTopic(const std::string& topic);

  bool empty() const {
    return committed_.empty() && pending_txns_.empty() && in_flight_.empty();
  }

 private:
  std::map<TopicPartition, OffsetAndMetadata> committed_;
  std::map<TopicPartition, int> in_flight_;
  std::map<int64_t, PendingTxn> pending_txns_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_GROUP_OFFSETS_H_
