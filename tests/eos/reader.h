// The checker's own reader: a plain librdkafka consumer (not the SDK's), set
// to read_committed, that reads every partition of the given topics from the
// beginning until its end reaches the partition's high watermark. The high
// watermark is asked separately, read_uncommitted, so that a transaction
// left open (which holds read_committed readers back at its first offset)
// shows as a partition whose end stayed below it.
#ifndef EXACTLY_TESTS_EOS_READER_H_
#define EXACTLY_TESTS_EOS_READER_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace exactly::eos {

struct ReadRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
};

struct PartitionEnd {
  std::string topic;
  int32_t partition = 0;
  int64_t high_watermark = 0;      // read_uncommitted's end
  int64_t read_committed_end = 0;  // where read_committed stopped
};

struct ReadResult {
  std::vector<ReadRecord> records;  // per partition in offset order
  std::vector<PartitionEnd> ends;
};

// Reads `topics` whole. Waits up to `patience` for read_committed to reach
// every high watermark (an open transaction is aborted by its coordinator
// after its timeout; patience should exceed it).
absl::StatusOr<ReadResult> ReadCommitted(const std::string& bootstrap_servers,
                                         const std::vector<std::string>& topics,
                                         std::chrono::milliseconds patience);

}  // namespace exactly::eos

#endif  // EXACTLY_TESTS_EOS_READER_H_
