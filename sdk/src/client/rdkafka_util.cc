#include "client/rdkafka_util.h"

#include <chrono>
#include <climits>

#include "absl/strings/str_cat.h"
#include "exactly/error.h"

namespace exactly::internal {

absl::Status WithContext(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  absl::Status out(status.code(),
                   absl::StrCat(std::string(context), ": ", status.message()));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

namespace {

// Error messages end up in logs: keep secrets out of them.
bool IsSecret(const std::string& name) {
  return name.find("password") != std::string::npos ||
         name.find("secret") != std::string::npos ||
         name.find(".key") != std::string::npos;
}

}  // namespace

absl::StatusOr<ConfPtr> MakeConf(
    const std::map<std::string, std::string>& properties) {
  ConfPtr conf(rd_kafka_conf_new());
  char errstr[512];
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), errstr,
                          sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      return absl::InvalidArgumentError(
          absl::StrCat("property ", name, "=", IsSecret(name) ? "***" : value,
                       ": ", errstr));
    }
  }
  return conf;
}

absl::StatusOr<HandlePtr> MakeHandle(rd_kafka_type_t type, ConfPtr conf) {
  char errstr[512];
  // rd_kafka_new() owns the configuration only when it succeeds.
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), errstr, sizeof(errstr));
  if (rk == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("librdkafka refused the configuration: ", errstr));
  }
  conf.release();
  return HandlePtr(rk);
}

absl::Status StatusFromError(const rd_kafka_error_t* error,
                             std::string_view context) {
  if (error == nullptr) return absl::OkStatus();
  KafkaError kafka_error;
  kafka_error.code = rd_kafka_error_code(error);
  kafka_error.name = rd_kafka_error_name(error);
  kafka_error.retriable = rd_kafka_error_is_retriable(error) != 0;
  kafka_error.txn_requires_abort =
      rd_kafka_error_txn_requires_abort(error) != 0;
  kafka_error.fatal = rd_kafka_error_is_fatal(error) != 0;
  return MakeKafkaStatus(
      kafka_error, absl::StrCat(std::string(context), ": ", kafka_error.name,
                                ": ", rd_kafka_error_string(error)));
}

absl::Status TakeError(rd_kafka_error_t* error, std::string_view context) {
  ErrorPtr owned(error);
  return StatusFromError(error, context);
}

absl::Status StatusFromCode(rd_kafka_resp_err_t err, std::string_view context,
                            rd_kafka_t* rk) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  if (err == RD_KAFKA_RESP_ERR__FATAL && rk != nullptr) {
    absl::Status fatal = FatalStatus(rk);
    if (!fatal.ok()) return WithContext(fatal, context);
  }
  KafkaError error = KafkaErrorFromCode(err);
  return MakeKafkaStatus(
      error, absl::StrCat(std::string(context), ": ", error.name, ": ",
                          rd_kafka_err2str(err)));
}

absl::Status FatalStatus(rd_kafka_t* rk) {
  char errstr[512];
  rd_kafka_resp_err_t err = rd_kafka_fatal_error(rk, errstr, sizeof(errstr));
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  KafkaError error = KafkaErrorFromCode(err);
  error.fatal = true;
  error.retriable = false;
  error.txn_requires_abort = false;
  return MakeKafkaStatus(
      error, absl::StrCat("fatal error: ", error.name, ": ", errstr));
}

PartitionListPtr ToPartitionList(
    const std::vector<TopicPartitionOffset>& offsets) {
  PartitionListPtr list(
      rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
  for (const auto& tpo : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), tpo.topic.c_str(),
                                      tpo.partition)
        ->offset = tpo.offset;
  }
  return list;
}

PartitionListPtr ToPartitionList(
    const std::vector<TopicPartition>& partitions) {
  PartitionListPtr list(
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (const auto& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(),
                                      tp.partition);
  }
  return list;
}

std::vector<TopicPartitionOffset> ToOffsets(
    const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartitionOffset> out;
  if (list == nullptr) return out;
  out.reserve(list->cnt);
  for (int i = 0; i < list->cnt; ++i) {
    const auto& e = list->elems[i];
    out.push_back({e.topic, e.partition, e.offset});
  }
  return out;
}

std::vector<TopicPartition> ToPartitions(
    const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> out;
  if (list == nullptr) return out;
  out.reserve(list->cnt);
  for (int i = 0; i < list->cnt; ++i) {
    out.push_back({list->elems[i].topic, list->elems[i].partition});
  }
  return out;
}

absl::Status FirstPartitionError(const rd_kafka_topic_partition_list_t* list,
                                 std::string_view context) {
  if (list == nullptr) return absl::OkStatus();
  for (int i = 0; i < list->cnt; ++i) {
    const auto& e = list->elems[i];
    if (e.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return StatusFromCode(
          e.err, absl::StrCat(std::string(context), " ", e.topic, "[",
                              e.partition, "]"));
    }
  }
  return absl::OkStatus();
}

int ToTimeoutMs(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) return -1;
  if (timeout.count() > INT_MAX) return INT_MAX;
  return static_cast<int>(timeout.count());
}

}  // namespace exactly::internal
