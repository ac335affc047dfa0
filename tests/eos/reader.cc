#include "eos/reader.h"

#include <librdkafka/rdkafka.h>

#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace exactly::eos {
namespace {

struct Destroy {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using Handle = std::unique_ptr<rd_kafka_t, Destroy>;

absl::StatusOr<Handle> NewConsumer(const std::string& bootstrap,
                                   const char* isolation) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::pair<const char*, std::string> props[] = {
      {"bootstrap.servers", bootstrap}, {"group.id", "exactly-eos-checker"},
      {"enable.auto.commit", "false"},  {"enable.partition.eof", "true"},
      {"isolation.level", isolation},   {"auto.offset.reset", "earliest"},
  };
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(err);
    }
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return absl::InternalError(err);
  }
  return Handle(rk);
}

absl::StatusOr<int32_t> PartitionCount(rd_kafka_t* rk,
                                       const std::string& topic) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(
        absl::StrCat("metadata of ", topic, ": ", rd_kafka_err2str(err)));
  }
  int32_t n = 0;
  if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    n = md->topics[0].partition_cnt;
  }
  rd_kafka_metadata_destroy(md);
  if (n <= 0) return absl::NotFoundError(absl::StrCat("no topic ", topic));
  return n;
}

}  // namespace

absl::StatusOr<ReadResult> ReadCommitted(const std::string& bootstrap,
                                         const std::vector<std::string>& topics,
                                         std::chrono::milliseconds patience) {
  absl::StatusOr<Handle> committed = NewConsumer(bootstrap, "read_committed");
  if (!committed.ok()) return committed.status();
  absl::StatusOr<Handle> uncommitted =
      NewConsumer(bootstrap, "read_uncommitted");
  if (!uncommitted.ok()) return uncommitted.status();

  ReadResult result;
  std::map<std::pair<std::string, int32_t>, size_t> end_index;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(8);
  for (const std::string& topic : topics) {
    absl::StatusOr<int32_t> n = PartitionCount(uncommitted->get(), topic);
    if (!n.ok()) {
      rd_kafka_topic_partition_list_destroy(list);
      return n.status();
    }
    for (int32_t p = 0; p < *n; ++p) {
      int64_t low = 0;
      int64_t high = 0;
      rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
          uncommitted->get(), topic.c_str(), p, &low, &high, 10000);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_topic_partition_list_destroy(list);
        return absl::UnavailableError(absl::StrCat(
            "high watermark of ", topic, "[", p, "]: ", rd_kafka_err2str(err)));
      }
      end_index[{topic, p}] = result.ends.size();
      result.ends.push_back({.topic = topic,
                             .partition = p,
                             .high_watermark = high,
                             .read_committed_end = -1});
      rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset =
          RD_KAFKA_OFFSET_BEGINNING;
    }
  }
  rd_kafka_assign(committed->get(), list);
  rd_kafka_topic_partition_list_destroy(list);

  size_t ended = 0;
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (ended < result.ends.size() &&
         std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(committed->get(), 100);
    if (m == nullptr) continue;
    const std::string topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "";
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      auto it = end_index.find({topic, m->partition});
      if (it != end_index.end()) {
        PartitionEnd& end = result.ends[it->second];
        const bool was_ended = end.read_committed_end >= end.high_watermark;
        end.read_committed_end = m->offset;
        if (!was_ended && end.read_committed_end >= end.high_watermark) {
          ++ended;
        }
      }
    } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ReadRecord r{
          .topic = topic, .partition = m->partition, .offset = m->offset};
      if (m->key != nullptr) {
        r.key.assign(static_cast<const char*>(m->key), m->key_len);
      }
      if (m->payload != nullptr) {
        r.value.assign(static_cast<const char*>(m->payload), m->len);
      }
      result.records.push_back(std::move(r));
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(committed->get());
  return result;
}

}  // namespace exactly::eos
