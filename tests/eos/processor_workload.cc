// The Processor workload: input written first, then consumed, transformed
// and committed exactly once by a Processor, while a second instance joins
// and leaves the group (each time the first one's open batch is aborted).
// Every input record is one "committed attempt" whose records are its
// outputs: 1 or 2 per input, each naming the input's partition and offset.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "eos/reader.h"
#include "eos/workload.h"
#include "exactly/exactly.h"

namespace exactly::eos {
namespace {

using Clock = std::chrono::steady_clock;

int32_t Fanout(int64_t input_offset) { return 1 + (input_offset % 2); }

AttemptId OutputsOf(int32_t partition, int64_t offset) {
  return {.writer = absl::StrCat("in", partition), .txn = offset, .attempt = 0};
}

ProcessorOptions Options(const WorkloadOptions& w, const std::string& group,
                         int instance) {
  ProcessorOptions o;
  o.bootstrap_servers = w.bootstrap_servers;
  o.group_id = group;
  o.input_topics = {w.input_topic};
  o.transactional_id = absl::StrCat(w.writer, "-proc-", instance);
  o.max_batch_records = 50;
  o.max_batch_time = std::chrono::milliseconds(50);
  o.consumer_properties["session.timeout.ms"] = "6000";
  o.consumer_properties["heartbeat.interval.ms"] = "300";
  o.producer_properties["transaction.timeout.ms"] = "10000";
  o.producer_properties["linger.ms"] = "2";
  o.retry.initial_backoff = std::chrono::milliseconds(10);
  o.retry.max_backoff = std::chrono::milliseconds(200);
  o.retry.max_retries = 50;
  o.retry.max_attempts = 50;
  o.on_error = [](const absl::Status&) {};
  return o;
}

Transform MakeTransform(const WorkloadOptions& w) {
  return [topic = w.topic](const Message& in, Emitter& out) -> absl::Status {
    const int32_t count = Fanout(in.offset());
    for (int32_t i = 0; i < count; ++i) {
      const std::string value =
          EncodeValue({.attempt = OutputsOf(in.partition(), in.offset()),
                       .index = i,
                       .count = count});
      if (absl::Status s =
              out.Send({.topic = topic, .key = in.key(), .value = value});
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  };
}

// Runs one processor instance until `stop`, recreating it after an error
// that ends it (as a supervisor restarts a crashed service).
void RunInstance(const WorkloadOptions& w, const std::string& group,
                 int instance, const std::atomic<bool>& stop,
                 std::atomic<int64_t>& restarts) {
  while (!stop.load()) {
    absl::StatusOr<std::unique_ptr<Processor>> p =
        Processor::Create(Options(w, group, instance), MakeTransform(w));
    if (!p.ok()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    while (!stop.load()) {
      absl::Status s = (*p)->RunOnce();
      if (!s.ok() && (IsFatal(s) || !IsRetriable(s))) {
        restarts.fetch_add(1);
        break;
      }
    }
    (*p)->Close().IgnoreError();
  }
}

// The group's committed offsets have reached every input partition's end.
bool Finished(rd_kafka_t* rk, const std::string& topic,
              const std::vector<int64_t>& ends) {
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(ends.size()));
  for (size_t p = 0; p < ends.size(); ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(),
                                      static_cast<int32_t>(p));
  }
  bool done = rd_kafka_committed(rk, list, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int i = 0; done && i < list->cnt; ++i) {
    done = list->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
           list->elems[i].offset >= ends[list->elems[i].partition];
  }
  rd_kafka_topic_partition_list_destroy(list);
  return done;
}

}  // namespace

WorkloadResult RunProcessor(const WorkloadOptions& w) {
  WorkloadResult result;
  result.topics = {w.topic};
  // 1. The input, written once by an idempotent producer.
  {
    ProducerOptions o;
    o.bootstrap_servers = w.bootstrap_servers;
    o.properties["linger.ms"] = "5";
    o.on_error = [](const absl::Status&) {};
    absl::StatusOr<std::unique_ptr<Producer>> producer = Producer::Create(o);
    if (!producer.ok()) {
      result.errors.push_back(producer.status().ToString());
      return result;
    }
    for (int64_t i = 0; i < w.input_records; ++i) {
      const std::string key = absl::StrCat("k", i);
      if (absl::Status s = (*producer)->Send(
              {.topic = w.input_topic, .key = key, .value = "input"});
          !s.ok()) {
        result.errors.push_back(absl::StrCat("input: ", s.ToString()));
        return result;
      }
    }
    if (absl::Status s = (*producer)->Flush(std::chrono::seconds(60));
        !s.ok()) {
      result.errors.push_back(absl::StrCat("input flush: ", s.ToString()));
      return result;
    }
  }
  // 2. What the input holds: each record is one committed "attempt" whose
  // records are its outputs.
  absl::StatusOr<ReadResult> input = ReadCommitted(
      w.bootstrap_servers, {w.input_topic}, std::chrono::seconds(60));
  if (!input.ok()) {
    result.errors.push_back(absl::StrCat("input: ", input.status().ToString()));
    return result;
  }
  std::vector<int64_t> ends(input->ends.size(), 0);
  for (const PartitionEnd& e : input->ends)
    ends[e.partition] = e.high_watermark;
  for (const ReadRecord& r : input->records) {
    result.attempts[OutputsOf(r.partition, r.offset)] = {
        .outcome = Outcome::kCommitted, .sent = Fanout(r.offset)};
  }

  Ready(w);  // the faults start now, not while the input is written

  // 3. Instance 1 runs throughout; instance 2 comes and goes.
  const std::string group = absl::StrCat(w.writer, "-group");
  std::atomic<bool> stop{false};
  std::atomic<int64_t> restarts{0};
  std::thread first([&] { RunInstance(w, group, 1, stop, restarts); });
  char errstr[256];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", w.bootstrap_servers.c_str(),
                    errstr, sizeof errstr);
  rd_kafka_conf_set(conf, "group.id", group.c_str(), errstr, sizeof errstr);
  rd_kafka_conf_set(conf, "isolation.level", "read_committed", errstr,
                    sizeof errstr);
  rd_kafka_t* offsets =
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
  std::mt19937_64 rng(w.seed);
  const auto end = Clock::now() + w.duration;
  bool finished = false;
  // Instance 2 comes and goes for the whole duration, also once the input is
  // done: rebalances and fencing under faults are what this run is for.
  while (Clock::now() < end) {
    std::atomic<bool> stop_second{false};
    std::thread second(
        [&] { RunInstance(w, group, 2, stop_second, restarts); });
    std::this_thread::sleep_for(std::chrono::milliseconds(
        std::uniform_int_distribution<int>(500, 2500)(rng)));
    stop_second.store(true);
    second.join();
    std::this_thread::sleep_for(std::chrono::milliseconds(
        std::uniform_int_distribution<int>(500, 2500)(rng)));
    finished = offsets != nullptr && Finished(offsets, w.input_topic, ends);
  }
  // The rest of the input alone, under the same faults.
  const auto patience = Clock::now() + std::chrono::seconds(60);
  while (!finished && Clock::now() < patience) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    finished = offsets != nullptr && Finished(offsets, w.input_topic, ends);
  }
  stop.store(true);
  first.join();
  if (offsets != nullptr) rd_kafka_destroy(offsets);
  if (!finished) {
    result.errors.push_back(
        "the processors did not commit every input offset in time");
  }
  result.rebuilds = restarts.load();
  return result;
}

}  // namespace exactly::eos
