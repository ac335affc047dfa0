// The consumer: read_committed, no auto-commit, in a consumer group. Poll it
// from one thread; rebalance listeners and async-commit callbacks run on that
// thread, inside Poll/PollBatch/Close.
#ifndef EXACTLY_CONSUMER_H_
#define EXACTLY_CONSUMER_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/group_metadata.h"
#include "exactly/message.h"
#include "exactly/options.h"
#include "exactly/record.h"

struct rd_kafka_s;

namespace exactly {

// Told when the group gives this consumer partitions or takes them away.
// Exceptions are caught and reported through on_error; the rebalance
// completes regardless.
class RebalanceListener {
 public:
  virtual ~RebalanceListener() = default;
  // The partitions are now this consumer's; records follow.
  virtual void OnAssigned(const std::vector<TopicPartition>& /*partitions*/) {}
  // The partitions are about to go; they are still assigned, so this is the
  // last moment to commit for them.
  virtual void OnRevoked(const std::vector<TopicPartition>& /*partitions*/) {}
  // The partitions were lost (e.g. session timeout) and may already belong to
  // another member: committing for them would fail. Defaults to OnRevoked.
  virtual void OnLost(const std::vector<TopicPartition>& partitions) {
    OnRevoked(partitions);
  }
};

using CommitCallback = std::function<void(const absl::Status&)>;

class Consumer {
 public:
  static absl::StatusOr<std::unique_ptr<Consumer>> Create(
      const ConsumerOptions& options);
  ~Consumer();  // Close()

  absl::Status Subscribe(const std::vector<std::string>& topics,
                         std::shared_ptr<RebalanceListener> listener = nullptr);
  absl::Status Unsubscribe();

  // One record, or nullopt if none arrived within `timeout`.
  absl::StatusOr<std::optional<Message>> Poll(
      std::chrono::milliseconds timeout);
  // Waits up to `timeout` for a first record, then takes what is already
  // fetched, up to `max_records`.
  absl::StatusOr<std::vector<Message>> PollBatch(
      size_t max_records, std::chrono::milliseconds timeout);

  // Synchronously commits the position after every record returned so far.
  absl::Status Commit();
  // Synchronously commits `offsets` (the next offset to read, per partition).
  absl::Status Commit(const std::vector<TopicPartitionOffset>& offsets);
  // The same, without waiting; `done` runs inside a later Poll or Close.
  absl::Status CommitAsync(CommitCallback done = nullptr);
  absl::Status CommitAsync(const std::vector<TopicPartitionOffset>& offsets,
                           CommitCallback done = nullptr);

  // The next Poll of that partition returns the record at `position.offset`
  // (or kOffsetBeginning / kOffsetEnd). The partition must be assigned.
  absl::Status Seek(
      const TopicPartitionOffset& position,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));
  // Positions (next offset to return) of the assigned partitions.
  absl::StatusOr<std::vector<TopicPartitionOffset>> Position() const;
  // Committed offsets of the assigned partitions (kOffsetInvalid if none).
  absl::StatusOr<std::vector<TopicPartitionOffset>> Committed(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));
  absl::StatusOr<std::vector<TopicPartition>> Assignment() const;
  // For TransactionalProducer::SendOffsets.
  absl::StatusOr<ConsumerGroupMetadata> GroupMetadata() const;

  // Leaves the group (listeners see the revocation) and stops. Messages
  // still held must be destroyed first. Later calls return OK.
  absl::Status Close();

  rd_kafka_s* native_handle() const;

 private:
  class Impl;
  explicit Consumer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exactly

#endif  // EXACTLY_CONSUMER_H_
