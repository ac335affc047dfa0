#include "spool/checkpoint.h"

#include <charconv>
#include <map>

#include "absl/strings/str_cat.h"
#include "exactly/error.h"

namespace exactly::internal::spool {
namespace {

constexpr std::string_view kCheckpointPrefix = "exactly-spool v1 spool=";

// Producer properties that also matter to a consumer of the same cluster:
// how to reach and authenticate to it.
bool IsConnectionProperty(const std::string& name) {
  static constexpr std::string_view kPrefixes[] = {
      "security.",
      "sasl.",
      "ssl.",
      "ssl_",
      "socket.",
      "broker.",
      "api.version",
      "client.",
      "reconnect.",
      "metadata.",
      "topic.metadata.",
      "connections.max.idle.ms",
      "log_level",
      "debug",
      "enable.ssl.",
      "allow.auto.create.topics",
      "retry.backoff",
      "resolve.canonical.bootstrap.servers.only",
  };
  for (std::string_view prefix : kPrefixes) {
    if (name.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

}  // namespace

std::string CheckpointKey(std::string_view transactional_id) {
  return absl::StrCat("spool/", absl::string_view(transactional_id.data(),
                                                  transactional_id.size()));
}

std::string ProbeKey(std::string_view transactional_id) {
  return absl::StrCat("probe/", absl::string_view(transactional_id.data(),
                                                  transactional_id.size()));
}

std::string EncodeCheckpoint(std::string_view spool_id, uint64_t seq) {
  return absl::StrCat(
      absl::string_view(kCheckpointPrefix.data(), kCheckpointPrefix.size()),
      absl::string_view(spool_id.data(), spool_id.size()), " seq=", seq);
}

std::optional<std::pair<std::string, uint64_t>> ParseCheckpoint(
    std::string_view value) {
  if (value.substr(0, kCheckpointPrefix.size()) != kCheckpointPrefix) {
    return std::nullopt;
  }
  value.remove_prefix(kCheckpointPrefix.size());
  const size_t space = value.find(" seq=");
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  std::string id(value.substr(0, space));
  std::string_view number = value.substr(space + 5);
  uint64_t seq = 0;
  auto [ptr, ec] =
      std::from_chars(number.data(), number.data() + number.size(), seq);
  if (ec != std::errc() || ptr != number.data() + number.size()) {
    return std::nullopt;
  }
  return std::make_pair(std::move(id), seq);
}

int32_t CheckpointPartition(std::string_view transactional_id,
                            int32_t partitions) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : transactional_id) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return partitions <= 1 ? 0 : static_cast<int32_t>(h % partitions);
}

absl::StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Create(
    const ProducerOptions& producer, std::string topic) {
  absl::StatusOr<std::map<std::string, std::string>> producer_properties =
      LibrdkafkaProperties(producer);
  if (!producer_properties.ok()) return producer_properties.status();
  std::map<std::string, std::string> properties;
  for (const auto& [name, value] : *producer_properties) {
    if (name == "bootstrap.servers" || IsConnectionProperty(name)) {
      properties[name] = value;
    }
  }
  properties["group.id"] = "exactly-spool-recovery";  // never joined
  properties["enable.auto.commit"] = "false";
  properties["enable.auto.offset.store"] = "false";
  properties["isolation.level"] = "read_committed";
  properties["enable.partition.eof"] = "false";
  properties["auto.offset.reset"] = "earliest";
  // The probe was committed just before the read; its commit marker may
  // land a moment after: poll again soon rather than long-poll.
  properties["fetch.wait.max.ms"] = "20";
  properties["fetch.error.backoff.ms"] = "20";
  absl::StatusOr<ConfPtr> conf = MakeConf(properties);
  if (!conf.ok()) return conf.status();
  absl::StatusOr<HandlePtr> rk =
      MakeHandle(RD_KAFKA_CONSUMER, std::move(*conf));
  if (!rk.ok()) return rk.status();
  return std::unique_ptr<CheckpointReader>(
      new CheckpointReader(std::move(topic), std::move(*rk)));
}

absl::Status CheckpointReader::CreateTopic(std::chrono::milliseconds timeout) {
  char errstr[512];
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic_.c_str(), 1, -1, errstr, sizeof errstr);
  if (new_topic == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint topic ", topic_, ": ", errstr));
  }
  rd_kafka_NewTopic_set_config(new_topic, "cleanup.policy", "compact");
  QueuePtr queue(rd_kafka_queue_new(rk_.get()));
  rd_kafka_AdminOptions_t* admin =
      rd_kafka_AdminOptions_new(rk_.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(
      admin, static_cast<int>(timeout.count()), errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk_.get(), &new_topic, 1, admin, queue.get());
  rd_kafka_AdminOptions_destroy(admin);
  rd_kafka_NewTopic_destroy(new_topic);
  absl::Status status = absl::DeadlineExceededError(
      absl::StrCat("creating checkpoint topic ", topic_, " timed out"));
  rd_kafka_event_t* event = rd_kafka_queue_poll(
      queue.get(), static_cast<int>(timeout.count()) + 1000);
  if (event == nullptr) return status;
  status = absl::OkStatus();
  if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status = StatusFromCode(rd_kafka_event_error(event),
                            absl::StrCat("create checkpoint topic ", topic_));
  } else if (const rd_kafka_CreateTopics_result_t* result =
                 rd_kafka_event_CreateTopics_result(event)) {
    size_t n = 0;
    const rd_kafka_topic_result_t** topics =
        rd_kafka_CreateTopics_result_topics(result, &n);
    for (size_t i = 0; i < n; ++i) {
      const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(topics[i]);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR &&
          err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        const char* why = rd_kafka_topic_result_error_string(topics[i]);
        status =
            StatusFromCode(err, absl::StrCat("create checkpoint topic ", topic_,
                                             ": ", why != nullptr ? why : ""));
      }
    }
  }
  rd_kafka_event_destroy(event);
  return status;
}

absl::StatusOr<int32_t> CheckpointReader::PartitionCount(
    std::chrono::milliseconds timeout) {
  rd_kafka_topic_t* rkt =
      rd_kafka_topic_new(rk_.get(), topic_.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(
      rk_.get(), 0, rkt, &md, static_cast<int>(timeout.count()));
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return StatusFromCode(
        err, absl::StrCat("metadata of checkpoint topic ", topic_));
  }
  absl::StatusOr<int32_t> out = absl::UnavailableError(
      absl::StrCat("checkpoint topic ", topic_, " not in metadata"));
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (topic_ != md->topics[i].topic) continue;
    if (md->topics[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      out = StatusFromCode(md->topics[i].err,
                           absl::StrCat("checkpoint topic ", topic_));
    } else if (md->topics[i].partition_cnt <= 0) {
      out = absl::UnavailableError(
          absl::StrCat("checkpoint topic ", topic_, " has no partitions"));
    } else {
      out = md->topics[i].partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

absl::StatusOr<std::optional<std::string>> CheckpointReader::ReadUntilProbe(
    int32_t partition, std::string_view key, std::string_view probe_key,
    std::string_view nonce, std::chrono::steady_clock::time_point deadline,
    const std::atomic<bool>* stop) {
  PartitionListPtr list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic_.c_str(), partition)
      ->offset = RD_KAFKA_OFFSET_BEGINNING;
  if (absl::Status s = StatusFromCode(rd_kafka_assign(rk_.get(), list.get()),
                                      "assign checkpoint partition");
      !s.ok()) {
    return s;
  }
  std::optional<std::string> last;
  absl::StatusOr<std::optional<std::string>> out = absl::DeadlineExceededError(
      absl::StrCat("did not read back the recovery probe from ", topic_, "[",
                   partition, "] in time"));
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop != nullptr && stop->load()) {
      out = absl::CancelledError("the spool is closing");
      break;
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_.get(), 100);
    if (m == nullptr) continue;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const rd_kafka_resp_err_t err = m->err;
      rd_kafka_message_destroy(m);
      absl::Status s = StatusFromCode(
          err, absl::StrCat("read checkpoint topic ", topic_), rk_.get());
      if (IsFatal(s)) {
        out = s;
        break;
      }
      continue;  // informational: librdkafka keeps fetching
    }
    const std::string_view k(static_cast<const char*>(m->key),
                             m->key != nullptr ? m->key_len : 0);
    const std::string_view v(static_cast<const char*>(m->payload),
                             m->payload != nullptr ? m->len : 0);
    if (k == key) {
      last = std::string(v);
    } else if (k == probe_key && v == nonce) {
      rd_kafka_message_destroy(m);
      out = std::move(last);
      break;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_assign(rk_.get(), nullptr);
  return out;
}

}  // namespace exactly::internal::spool
