// Round-trips records through a broker with librdkafka's idempotent producer
// and a consumer, and reports what came back.
//
//   broker_roundtrip [--bootstrap-servers HOST:PORT] [--records N]
//
// With no --bootstrap-servers it starts the bundled broker in this process.
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "exactly/broker/broker.h"

namespace {

rd_kafka_t* NewClient(
    rd_kafka_type_t type, const std::string& bootstrap,
    std::initializer_list<std::pair<const char*, const char*>> props) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err,
                    sizeof err);
  for (auto [k, v] : props) {
    if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
      std::fprintf(stderr, "%s\n", err);
      std::exit(1);
    }
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    std::fprintf(stderr, "rd_kafka_new: %s\n", err);
    std::exit(1);
  }
  return rk;
}

}  // namespace

int main(int argc, char** argv) {
  std::string bootstrap;
  long records = 10000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--bootstrap-servers") == 0 && i + 1 < argc) {
      bootstrap = argv[++i];
    } else if (std::strcmp(argv[i], "--records") == 0 && i + 1 < argc) {
      records = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--bootstrap-servers HOST:PORT] [--records N]\n",
                   argv[0]);
      return 2;
    }
  }
  std::unique_ptr<exactly::broker::Broker> broker;
  if (bootstrap.empty()) {
    auto started = exactly::broker::Broker::Start({});
    if (!started.ok()) {
      std::fprintf(stderr, "cannot start the bundled broker: %s\n",
                   std::string(started.status().message()).c_str());
      return 1;
    }
    broker = std::move(*started);
    bootstrap = broker->bootstrap_servers();
    std::printf("started the bundled broker in-process at %s\n",
                bootstrap.c_str());
  }
  const std::string topic = "roundtrip";

  auto start = std::chrono::steady_clock::now();
  rd_kafka_t* producer =
      NewClient(RD_KAFKA_PRODUCER, bootstrap,
                {{"enable.idempotence", "true"}, {"acks", "all"}});
  for (long i = 0; i < records; ++i) {
    std::string value = absl::StrCat("record-", i);
    while (rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic.c_str()),
                             RD_KAFKA_V_VALUE(value.data(), value.size()),
                             RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                             RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(producer, 10);
    }
  }
  rd_kafka_resp_err_t flushed = rd_kafka_flush(producer, 60000);
  rd_kafka_destroy(producer);
  if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::fprintf(stderr, "flush failed: %s\n", rd_kafka_err2str(flushed));
    return 1;
  }
  double produce_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("produced %ld records with an idempotent producer in %.2f s\n",
              records, produce_s);

  rd_kafka_t* consumer = NewClient(RD_KAFKA_CONSUMER, bootstrap,
                                   {{"group.id", "roundtrip-demo"},
                                    {"auto.offset.reset", "earliest"},
                                    {"enable.auto.commit", "false"}});
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), 0)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(consumer, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::set<std::string> seen;
  long duplicates = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (static_cast<long>(seen.size()) < records &&
         std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::string value(static_cast<const char*>(m->payload), m->len);
      if (!seen.insert(value).second) ++duplicates;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  long missing = records - static_cast<long>(seen.size());
  std::printf("read back %zu distinct records: %ld missing, %ld duplicated\n",
              seen.size(), missing, duplicates);
  return missing == 0 && duplicates == 0 ? 0 : 1;
}
