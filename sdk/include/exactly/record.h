// The values that travel through the SDK: an outgoing Record, its delivery
// report, and topic/partition/offset coordinates.
#ifndef EXACTLY_RECORD_H_
#define EXACTLY_RECORD_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace exactly {

// Let the partitioner choose (librdkafka's RD_KAFKA_PARTITION_UA).
inline constexpr int32_t kAnyPartition = -1;
// Logical offsets (librdkafka's RD_KAFKA_OFFSET_*).
inline constexpr int64_t kOffsetBeginning = -2;
inline constexpr int64_t kOffsetEnd = -1;
inline constexpr int64_t kOffsetInvalid = -1001;

// A record header. A default-constructed (null) value is sent as a null
// header value; "" is an empty one.
struct Header {
  std::string_view key;
  std::string_view value;
};

// A record to produce. The SDK copies what it needs before Send() returns, so
// the views only have to live for the call. A default-constructed key or
// value (data() == nullptr) is sent as null; "" is sent as empty.
struct Record {
  std::string_view topic;
  std::string_view key;
  std::string_view value;
  int32_t partition = kAnyPartition;
  int64_t timestamp_ms = 0;  // 0: the producer's clock at Send()
  std::span<const Header> headers = {};
};

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};

struct TopicPartitionOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = kOffsetInvalid;
  auto operator<=>(const TopicPartitionOffset&) const = default;
};

// Where a delivered record landed.
struct RecordMetadata {
  std::string topic;
  int32_t partition = kAnyPartition;
  int64_t offset = kOffsetInvalid;
  int64_t timestamp_ms = 0;
};

// The outcome of one Send(), handed to its callback. The views point into
// librdkafka's copy of the record and are valid during the callback only.
struct DeliveryReport {
  absl::Status status;  // OK: durably written with acks=all
  std::string_view topic;
  int32_t partition = kAnyPartition;
  int64_t offset = kOffsetInvalid;
  int64_t timestamp_ms = 0;
  std::string_view key;
  std::string_view value;
};

// Runs on the producer's delivery thread, once per record. Keep it short:
// the next reports wait for it; and do not call Flush, Close or Commit from
// it, since they wait for this very thread. An exception it throws is caught
// and reported through the options' on_error.
using DeliveryCallback = std::function<void(const DeliveryReport&)>;

// Receives errors that have no call to return them to: background client
// errors, fatal errors, exceptions thrown by user callbacks.
using ErrorCallback = std::function<void(const absl::Status&)>;

// Receives librdkafka's statistics, the JSON its STATISTICS.md describes,
// every "statistics.interval.ms" (set it in the options' properties; 0,
// librdkafka's default, sends none). A producer calls it on its delivery
// thread, a consumer inside Poll/PollBatch. Keep it short. An exception it
// throws is caught and reported through the options' on_error.
using StatisticsCallback = std::function<void(std::string_view json)>;

}  // namespace exactly

#endif  // EXACTLY_RECORD_H_
