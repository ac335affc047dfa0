// The read_committed consumer: it sees only records of committed
// transactions, and it commits its position itself, after the work is done,
// so that a restarted consumer neither skips nor repeats a record.
//
//   read_committed_consumer [--bootstrap-servers HOST:PORT] [--records N]
//   read_committed_consumer --bootstrap-servers HOST:PORT --topic T
//                           [--group G] [--records N]
//
// Without --topic it first writes N records to a fresh topic with a
// transactional producer (and aborts a transaction every few, so that there is
// something to skip), then reads them in two sessions of the same group: the
// first stops half-way and commits, the second resumes from the committed
// position. It checks that all N arrived, each once, nothing aborted. With
// --topic it only reads that topic, until N records or 5 s of silence. With
// no --bootstrap-servers it starts the bundled broker in this process.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "exactly/broker/broker.h"
#include "exactly/exactly.h"
#include "example_support.h"

namespace {

struct Flags {
  std::string bootstrap_servers;
  std::string topic;  // empty: produce to a fresh topic first
  std::string group = "read-committed-example";
  int records = 10000;
};

// Writes records "0".."n-1" in transactions of 100; after every third one, a
// transaction of "aborted" records that is aborted.
bool ProduceInput(const std::string& servers, const std::string& topic, int n) {
  exactly::ProducerOptions options;
  options.bootstrap_servers = servers;
  options.transactional_id = topic + "-writer";
  auto producer = exactly::TransactionalProducer::Create(options);
  if (!producer.ok()) {
    std::fprintf(stderr, "create producer: %s\n",
                 producer.status().ToString().c_str());
    return false;
  }
  for (int first = 0, txn = 0; first < n; first += 100, ++txn) {
    absl::Status s = (*producer)->Transact([&](exactly::Transaction& t) {
      for (int i = first; i < std::min(n, first + 100); ++i) {
        const std::string value = std::to_string(i);
        if (absl::Status sent = t.Send({.topic = topic, .value = value});
            !sent.ok()) {
          return sent;
        }
      }
      return absl::OkStatus();
    });
    if (!s.ok()) {
      std::fprintf(stderr, "transaction: %s\n", s.ToString().c_str());
      return false;
    }
    if (txn % 3 == 0) {
      // Returning an error from the function aborts the transaction; the
      // error comes back unchanged.
      absl::Status aborted =
          (*producer)->Transact([&](exactly::Transaction& t) {
            absl::Status sent = t.Send({.topic = topic, .value = "aborted"});
            return sent.ok() ? absl::AbortedError("rolled back on purpose")
                             : sent;
          });
      if (aborted.message() != "rolled back on purpose") {
        std::fprintf(stderr, "aborted transaction: %s\n",
                     aborted.ToString().c_str());
        return false;
      }
    }
  }
  const exactly::TransactionStats stats = (*producer)->stats();
  std::printf("wrote %d records in %llu transactions, aborted %llu more\n", n,
              static_cast<unsigned long long>(stats.committed),
              static_cast<unsigned long long>(stats.aborted));
  return (*producer)->Close().ok();
}

// One consumer session: reads until `stop_after` records in total were seen
// (across sessions) or `idle` passed without a record, then commits what it
// has processed and leaves the group. Returns false on an error.
bool ConsumeSession(const Flags& flags, const std::string& topic,
                    int stop_after, std::chrono::milliseconds idle,
                    std::map<std::string, int>& seen, int& total) {
  exactly::ConsumerOptions options;
  options.bootstrap_servers = flags.bootstrap_servers;
  options.group_id = flags.group;
  // A group with no committed position starts at the beginning. The SDK's
  // defaults already say isolation.level=read_committed and
  // enable.auto.commit=false.
  options.properties["auto.offset.reset"] = "earliest";
  auto consumer = exactly::Consumer::Create(options);
  if (!consumer.ok()) {
    std::fprintf(stderr, "create consumer: %s\n",
                 consumer.status().ToString().c_str());
    return false;
  }
  if (absl::Status s = (*consumer)->Subscribe({topic}); !s.ok()) {
    std::fprintf(stderr, "subscribe: %s\n", s.ToString().c_str());
    return false;
  }
  auto last_record = std::chrono::steady_clock::now();
  while (total < stop_after &&
         std::chrono::steady_clock::now() - last_record < idle) {
    auto batch = (*consumer)->PollBatch(static_cast<size_t>(stop_after - total),
                                        std::chrono::milliseconds(200));
    if (!batch.ok()) {
      std::fprintf(stderr, "poll: %s\n", batch.status().ToString().c_str());
      continue;
    }
    if (batch->empty()) continue;
    last_record = std::chrono::steady_clock::now();
    // The work: here, counting. Real work (a database write, ...) goes here,
    // before the commit below.
    for (const exactly::Message& m : *batch) {
      ++seen[std::string(m.value())];
      ++total;
    }
    batch->clear();  // messages must go before the consumer does
    // Only now, with the batch processed, is its position committed. A crash
    // before this line means the batch is read again, never skipped.
    if (absl::Status s = (*consumer)->Commit(); !s.ok()) {
      std::fprintf(stderr, "commit: %s\n", s.ToString().c_str());
      return false;
    }
  }
  return (*consumer)->Close().ok();
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!exactly::examples::ParseFlags(
          argc, argv,
          {{"--bootstrap-servers", &flags.bootstrap_servers},
           {"--topic", &flags.topic},
           {"--group", &flags.group},
           {"--records", &flags.records}}) ||
      !(flags.records > 0)) {
    std::fprintf(stderr,
                 "usage: %s [--bootstrap-servers HOST:PORT] [--topic T] "
                 "[--group G] [--records N]\n",
                 argv[0]);
    return 2;
  }
  std::unique_ptr<exactly::broker::Broker> broker;
  if (!exactly::examples::StartBundledBrokerUnlessGiven(flags.bootstrap_servers,
                                                        broker)) {
    return 1;
  }
  if (broker != nullptr) {
    std::printf("started the bundled broker at %s\n",
                flags.bootstrap_servers.c_str());
  }

  std::map<std::string, int> seen;  // value -> times read
  int total = 0;
  if (!flags.topic.empty()) {
    // Just read someone else's topic.
    if (!ConsumeSession(flags, flags.topic, flags.records,
                        std::chrono::seconds(5), seen, total)) {
      return 1;
    }
    std::printf("read %d committed records from %s\n", total,
                flags.topic.c_str());
    return 0;
  }

  const std::string suffix = std::to_string(std::random_device{}() % 100000);
  const std::string topic = "ledger-" + suffix;
  flags.group += "-" + suffix;
  if (!ProduceInput(flags.bootstrap_servers, topic, flags.records)) return 1;
  // Two sessions of one group: the second starts where the first committed.
  const auto idle = std::chrono::seconds(30);
  if (!ConsumeSession(flags, topic, flags.records / 2, idle, seen, total)) {
    return 1;
  }
  std::printf("first consumer read %d records, committed, and left\n", total);
  if (!ConsumeSession(flags, topic, flags.records, idle, seen, total)) {
    return 1;
  }
  std::printf("second consumer resumed and read the other %d\n",
              total - flags.records / 2);

  int missing = 0, duplicated = 0;
  for (int i = 0; i < flags.records; ++i) {
    auto it = seen.find(std::to_string(i));
    if (it == seen.end()) {
      ++missing;
    } else {
      duplicated += it->second - 1;
    }
  }
  const int aborted = seen.count("aborted") ? seen["aborted"] : 0;
  std::printf(
      "%d read: %d missing, %d duplicated, %d from aborted "
      "transactions\n",
      total, missing, duplicated, aborted);
  return missing == 0 && duplicated == 0 && aborted == 0 ? 0 : 1;
}
