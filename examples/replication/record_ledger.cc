#include "examples/replication/record_ledger.h"

#include <chrono>
#include <thread>

namespace exactly::examples {

namespace {

rd_kafka_conf_t* Config(const std::map<std::string, std::string>& properties) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[256];
  for (const auto& [key, value] : properties)
    rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error);
  return conf;
}

}  // namespace

LedgerProducer::LedgerProducer(const std::string& bootstrap_servers,
                               const std::string& acks,
                               int32_t message_timeout_ms) {
  rd_kafka_conf_t* conf = Config({
      {"bootstrap.servers", bootstrap_servers},
      {"acks", acks},
      {"enable.idempotence", acks == "all" ? "true" : "false"},
      {"linger.ms", "1"},
      {"message.timeout.ms", std::to_string(message_timeout_ms)},
      // A test cluster: move to a new leader fast.
      {"retry.backoff.ms", "20"},
      {"reconnect.backoff.ms", "20"},
      {"reconnect.backoff.max.ms", "200"},
      {"topic.metadata.refresh.fast.interval.ms", "20"},
      // Brokers die here on purpose: librdkafka's errors about it are noise.
      {"log_level", "2"},
  });
  rd_kafka_conf_set_dr_msg_cb(conf, &LedgerProducer::OnDelivery);
  rd_kafka_conf_set_opaque(conf, this);
  char error[256];
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
}

LedgerProducer::~LedgerProducer() {
  if (rk_ == nullptr) return;
  rd_kafka_flush(rk_, 10000);
  rd_kafka_destroy(rk_);
}

void LedgerProducer::Send(const std::string& topic, const std::string& value) {
  auto* copy = new std::string(value);
  while (rd_kafka_producev(
             rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
             RD_KAFKA_V_VALUE(const_cast<char*>(copy->data()), copy->size()),
             RD_KAFKA_V_OPAQUE(copy),
             RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
    rd_kafka_poll(rk_, 10);
  rd_kafka_poll(rk_, 0);
}

void LedgerProducer::Flush(int timeout_ms) { rd_kafka_flush(rk_, timeout_ms); }

void LedgerProducer::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m,
                                void* opaque) {
  auto* self = static_cast<LedgerProducer*>(opaque);
  std::unique_ptr<std::string> value(static_cast<std::string*>(m->_private));
  std::lock_guard<std::mutex> lock(self->mu_);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    self->acknowledged_.insert(*value);
  } else {
    ++self->refused_;
  }
}

std::set<std::string> LedgerProducer::acknowledged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return acknowledged_;
}

int64_t LedgerProducer::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

std::map<std::string, int> ReadPartition(const std::string& bootstrap_servers,
                                         const std::string& topic) {
  std::map<std::string, int> read;
  rd_kafka_conf_t* conf = Config({{"bootstrap.servers", bootstrap_servers},
                                  {"group.id", "replication-scenarios"},
                                  {"enable.auto.commit", "false"},
                                  {"enable.partition.eof", "true"},
                                  {"log_level", "2"}});
  char error[256];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (rk == nullptr) return read;
  int64_t low = 0, high = -1;
  // The partition may still be moving to a new leader: ask until it answers.
  for (int i = 0; i < 200 && high < 0; ++i) {
    if (rd_kafka_query_watermark_offsets(rk, topic.c_str(), 0, &low, &high,
                                         1000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      high = -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  rd_kafka_topic_partition_list_t* assignment =
      rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(assignment, topic.c_str(), 0)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, assignment);
  rd_kafka_topic_partition_list_destroy(assignment);
  int64_t next = low;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (next < high && std::chrono::steady_clock::now() < give_up) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++read[std::string(static_cast<const char*>(m->payload), m->len)];
      next = m->offset + 1;
    } else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      next = std::max(next, m->offset);
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return read;
}

Counts Tally(const std::set<std::string>& acknowledged, int64_t refused,
             const std::map<std::string, int>& read) {
  Counts c;
  c.acknowledged = static_cast<int64_t>(acknowledged.size());
  c.refused = refused;
  for (const std::string& value : acknowledged)
    if (read.find(value) == read.end()) ++c.lost;
  for (const auto& [value, times] : read)
    if (times > 1) c.duplicated += times - 1;
  return c;
}

}  // namespace exactly::examples
