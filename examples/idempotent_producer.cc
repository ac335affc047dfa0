// The idempotent producer: every record is written once and in order per
// partition, even when the client has to retry because a response was lost.
//
//   idempotent_producer [--bootstrap-servers HOST:PORT] [--records N]
//
// With no --bootstrap-servers it starts the bundled broker in this process and
// makes it drop three produce responses after appending the batch: the
// client cannot tell a lost response from a lost request, so it sends the
// batch again. The example then reads the broker's log and checks that each
// record is there exactly once. Against your own cluster it checks the
// delivery reports: N records delivered, none failed.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "exactly/broker/broker.h"
#include "exactly/exactly.h"
#include "example_support.h"

namespace {

struct Flags {
  std::string bootstrap_servers;
  int records = 10000;
};

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!exactly::examples::ParseFlags(
          argc, argv,
          {{"--bootstrap-servers", &flags.bootstrap_servers},
           {"--records", &flags.records}}) ||
      !(flags.records > 0)) {
    std::fprintf(stderr,
                 "usage: %s [--bootstrap-servers HOST:PORT] [--records N]\n",
                 argv[0]);
    return 2;
  }
  // A fresh topic per run, so that a rerun against the same cluster counts
  // only its own records.
  const std::string topic =
      "idempotent-example-" + std::to_string(std::random_device{}() % 100000);

  std::unique_ptr<exactly::broker::Broker> broker;
  if (!exactly::examples::StartBundledBrokerUnlessGiven(flags.bootstrap_servers,
                                                        broker)) {
    return 1;
  }
  if (broker != nullptr) {
    if (absl::Status s = broker->CreateTopic(topic, 3); !s.ok()) {
      std::fprintf(stderr, "create topic: %s\n", s.ToString().c_str());
      return 1;
    }
    // The broker appends the batch, then closes the connection instead of
    // answering. Without idempotence each of these becomes a duplicate.
    broker->faults().DropProduceResponses(/*count=*/3, /*one_in=*/3,
                                          {.topic = topic});
    std::printf(
        "started the bundled broker at %s (it will drop 3 produce "
        "responses)\n",
        flags.bootstrap_servers.c_str());
  }

  // The defaults are the safe ones: enable.idempotence=true, acks=all.
  // Create() refuses properties that would break them (try acks=1).
  exactly::ProducerOptions options;
  options.bootstrap_servers = flags.bootstrap_servers;
  // Any librdkafka property can be set. Small batches here only so that
  // this short run makes enough requests to meet the dropped responses.
  options.properties["batch.num.messages"] = "200";
  auto producer = exactly::Producer::Create(options);
  if (!producer.ok()) {
    std::fprintf(stderr, "create producer: %s\n",
                 producer.status().ToString().c_str());
    return 1;
  }

  // Delivery reports arrive on the SDK's delivery thread; count them there.
  std::atomic<int> delivered{0}, failed{0};
  for (int i = 0; i < flags.records; ++i) {
    const std::string key = "customer-" + std::to_string(i % 16);
    const std::string value = "order-" + std::to_string(i);
    absl::Status s =
        (*producer)->Send({.topic = topic, .key = key, .value = value},
                          [&](const exactly::DeliveryReport& report) {
                            if (report.status.ok()) {
                              ++delivered;
                            } else {
                              ++failed;
                              std::fprintf(stderr, "delivery failed: %s\n",
                                           report.status.ToString().c_str());
                            }
                          });
    if (!s.ok()) {
      // Not queued (e.g. the local queue stayed full): it will not be
      // reported, so the caller decides what to do with it.
      std::fprintf(stderr, "send: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  // Waits for every report; a record is only durable once it is reported OK.
  if (absl::Status s = (*producer)->Flush(std::chrono::seconds(60)); !s.ok()) {
    std::fprintf(stderr, "flush: %s\n", s.ToString().c_str());
    return 1;
  }
  if (absl::Status s = (*producer)->Close(); !s.ok()) {
    std::fprintf(stderr, "close: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%d records delivered, %d failed\n", delivered.load(),
              failed.load());
  if (delivered != flags.records || failed != 0) return 1;

  if (broker != nullptr) {
    // What the broker stored: each record once, despite the retries.
    std::set<std::string> distinct;
    int stored = 0;
    for (int p = 0; p < 3; ++p) {
      auto log = broker->ReadLog(topic, p);
      if (!log.ok()) {
        std::fprintf(stderr, "read log: %s\n", log.status().ToString().c_str());
        return 1;
      }
      for (const exactly::broker::LoggedBatch& batch : *log) {
        for (const exactly::broker::LoggedRecord& r : batch.records) {
          ++stored;
          distinct.insert(r.value.value_or(""));
        }
      }
    }
    int dropped = 0;
    for (const std::string& fault : broker->faults().History()) {
      dropped += fault.starts_with("appended") ? 1 : 0;
    }
    std::printf(
        "the broker dropped %d responses; its log holds %d records, %zu "
        "distinct: %s\n",
        dropped, stored, distinct.size(),
        stored == flags.records && distinct.size() == size_t(flags.records)
            ? "each exactly once"
            : "WRONG");
    if (stored != flags.records ||
        distinct.size() != static_cast<size_t>(flags.records)) {
      return 1;
    }
  }
  return 0;
}
