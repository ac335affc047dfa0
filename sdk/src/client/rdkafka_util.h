// The thin layer over librdkafka's C API: owning pointers for its handles,
// configuration from a property map, partition lists, and errors to statuses.
#ifndef EXACTLY_SDK_SRC_CLIENT_RDKAFKA_UTIL_H_
#define EXACTLY_SDK_SRC_CLIENT_RDKAFKA_UTIL_H_

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/record.h"

namespace exactly::internal {

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* p) const { rd_kafka_destroy(p); }
  void operator()(rd_kafka_conf_t* p) const { rd_kafka_conf_destroy(p); }
  void operator()(rd_kafka_queue_t* p) const { rd_kafka_queue_destroy(p); }
  void operator()(rd_kafka_error_t* p) const { rd_kafka_error_destroy(p); }
  void operator()(rd_kafka_event_t* p) const { rd_kafka_event_destroy(p); }
  void operator()(rd_kafka_topic_partition_list_t* p) const {
    rd_kafka_topic_partition_list_destroy(p);
  }
  void operator()(rd_kafka_consumer_group_metadata_t* p) const {
    rd_kafka_consumer_group_metadata_destroy(p);
  }
};

using HandlePtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;
using ConfPtr = std::unique_ptr<rd_kafka_conf_t, RdKafkaDeleter>;
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, RdKafkaDeleter>;
using ErrorPtr = std::unique_ptr<rd_kafka_error_t, RdKafkaDeleter>;
using PartitionListPtr =
    std::unique_ptr<rd_kafka_topic_partition_list_t, RdKafkaDeleter>;

// A librdkafka configuration holding `properties`; an unknown property or a
// bad value is an InvalidArgument naming it.
absl::StatusOr<ConfPtr> MakeConf(
    const std::map<std::string, std::string>& properties);

// Creates the client; librdkafka's own refusals become InvalidArgument.
absl::StatusOr<HandlePtr> MakeHandle(rd_kafka_type_t type, ConfPtr conf);

// `error` (flags as librdkafka set them) as a status; OK for nullptr.
absl::Status StatusFromError(const rd_kafka_error_t* error,
                             std::string_view context);
// The same, and destroys `error`.
absl::Status TakeError(rd_kafka_error_t* error, std::string_view context);

// A bare error code as a status, flags from KafkaErrorFromCode(). `rk`, when
// given, resolves _FATAL into the error that made the client fatal.
absl::Status StatusFromCode(rd_kafka_resp_err_t err, std::string_view context,
                            rd_kafka_t* rk = nullptr);

// The client's fatal error as a status, OK if it has none.
absl::Status FatalStatus(rd_kafka_t* rk);

PartitionListPtr ToPartitionList(
    const std::vector<TopicPartitionOffset>& offsets);
PartitionListPtr ToPartitionList(const std::vector<TopicPartition>& partitions);
std::vector<TopicPartitionOffset> ToOffsets(
    const rd_kafka_topic_partition_list_t* list);
std::vector<TopicPartition> ToPartitions(
    const rd_kafka_topic_partition_list_t* list);
// The first per-partition error in `list`, OK if none.
absl::Status FirstPartitionError(const rd_kafka_topic_partition_list_t* list,
                                 std::string_view context);

// `status` with "context: " before its message, payloads kept.
absl::Status WithContext(const absl::Status& status, std::string_view context);

// librdkafka takes int milliseconds; -1 means "no limit".
int ToTimeoutMs(std::chrono::milliseconds timeout);

}  // namespace exactly::internal

#endif  // EXACTLY_SDK_SRC_CLIENT_RDKAFKA_UTIL_H_
