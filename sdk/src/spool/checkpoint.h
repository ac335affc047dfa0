// The Kafka side of the spool's exactly-once recovery: the checkpoint
// topic, its records, and reading them back with read_committed.
//
// Each drain transaction writes
//   key "spool/<transactional.id>"  value "exactly-spool v1 spool=<id> seq=<n>"
// and each recovery commits a probe
//   key "probe/<transactional.id>"  value "<nonce>"
// to the same partition of the (compacted) checkpoint topic. Different keys,
// so that compaction keeps the latest of each.
#ifndef EXACTLY_SDK_SRC_SPOOL_CHECKPOINT_H_
#define EXACTLY_SDK_SRC_SPOOL_CHECKPOINT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/rdkafka_util.h"
#include "exactly/options.h"

namespace exactly::internal::spool {

std::string CheckpointKey(std::string_view transactional_id);
std::string ProbeKey(std::string_view transactional_id);
std::string EncodeCheckpoint(std::string_view spool_id, uint64_t seq);
// (spool id, sequence), or nullopt if `value` is not a checkpoint.
std::optional<std::pair<std::string, uint64_t>> ParseCheckpoint(
    std::string_view value);
// The partition both records of `transactional_id` go to.
int32_t CheckpointPartition(std::string_view transactional_id,
                            int32_t partitions);

// A librdkafka consumer for the checkpoint topic (assign only, no group),
// with the connection settings of the producer's options (security, ...).
class CheckpointReader {
 public:
  static absl::StatusOr<std::unique_ptr<CheckpointReader>> Create(
      const ProducerOptions& producer, std::string topic);

  // Creates the topic (compacted, 1 partition) unless it exists.
  absl::Status CreateTopic(std::chrono::milliseconds timeout);
  absl::StatusOr<int32_t> PartitionCount(std::chrono::milliseconds timeout);

  // Reads `partition` from its beginning, read_committed, until the record
  // `probe_key` = `nonce`; returns the last value of `key` before it
  // (nullopt if none). Gives up at `deadline` (DEADLINE_EXCEEDED,
  // retriable) or when `*stop` becomes true (CANCELLED).
  absl::StatusOr<std::optional<std::string>> ReadUntilProbe(
      int32_t partition, std::string_view key, std::string_view probe_key,
      std::string_view nonce, std::chrono::steady_clock::time_point deadline,
      const std::atomic<bool>* stop);

 private:
  CheckpointReader(std::string topic, HandlePtr rk)
      : topic_(std::move(topic)), rk_(std::move(rk)) {}

  const std::string topic_;
  HandlePtr rk_;
};

}  // namespace exactly::internal::spool

#endif  // EXACTLY_SDK_SRC_SPOOL_CHECKPOINT_H_
