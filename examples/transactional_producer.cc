// The transactional producer: a group of records becomes visible to
// read_committed consumers all together, or not at all.
//
//   transactional_producer [--bootstrap-servers HOST:PORT] [--records N]
//                          [--per-transaction K]
//
// It writes N records in transactions of K, plus one transaction that it
// aborts on purpose, then reads the topic back with a read_committed consumer
// and checks: exactly the N committed records, none of the aborted ones.
// With no --bootstrap-servers it starts the bundled broker in this process.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "exactly/broker/broker.h"
#include "exactly/exactly.h"

namespace {

struct Flags {
  std::string bootstrap_servers;
  int records = 10000;
  int per_transaction = 500;
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--bootstrap-servers" && i + 1 < argc) {
      flags.bootstrap_servers = argv[++i];
    } else if (arg == "--records" && i + 1 < argc) {
      flags.records = std::atoi(argv[++i]);
    } else if (arg == "--per-transaction" && i + 1 < argc) {
      flags.per_transaction = std::atoi(argv[++i]);
    } else {
      return false;
    }
  }
  return flags.records > 0 && flags.per_transaction > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) {
    std::fprintf(stderr,
                 "usage: %s [--bootstrap-servers HOST:PORT] [--records N] "
                 "[--per-transaction K]\n",
                 argv[0]);
    return 2;
  }
  const std::string suffix = std::to_string(std::random_device{}() % 100000);
  const std::string topic = "payments-" + suffix;

  std::unique_ptr<exactly::broker::Broker> broker;
  if (flags.bootstrap_servers.empty()) {
    auto started = exactly::broker::Broker::Start({});
    if (!started.ok()) {
      std::fprintf(stderr, "cannot start the bundled broker: %s\n",
                   started.status().ToString().c_str());
      return 1;
    }
    broker = std::move(*started);
    flags.bootstrap_servers = broker->bootstrap_servers();
    std::printf("started the bundled broker at %s\n",
                flags.bootstrap_servers.c_str());
  }

  // The transactional.id must be stable for one logical writer across its
  // restarts: a new instance fences the old one and finishes or aborts its
  // open transaction.
  exactly::ProducerOptions options;
  options.bootstrap_servers = flags.bootstrap_servers;
  options.transactional_id = "payments-writer-" + suffix;
  auto producer = exactly::TransactionalProducer::Create(options);
  if (!producer.ok()) {
    std::fprintf(stderr, "create producer: %s\n",
                 producer.status().ToString().c_str());
    return 1;
  }

  // Transact() begins, runs the function, and commits. On an abortable error
  // it aborts and runs the function again, so the function must send the
  // same records each time: here they depend only on `first`.
  for (int first = 0; first < flags.records; first += flags.per_transaction) {
    const int last = std::min(flags.records, first + flags.per_transaction);
    absl::Status s = (*producer)->Transact([&](exactly::Transaction& txn) {
      for (int i = first; i < last; ++i) {
        const std::string value = "payment-" + std::to_string(i);
        if (absl::Status sent = txn.Send({.topic = topic, .value = value});
            !sent.ok()) {
          return sent;
        }
      }
      return absl::OkStatus();
    });
    if (!s.ok()) {
      std::fprintf(stderr, "transaction [%d, %d): %s\n", first, last,
                   s.ToString().c_str());
      return 1;
    }
    if (first == 0) {
      // A transaction that fails half-way: returning an error from the
      // function aborts it, and its records never reach read_committed
      // consumers, although the broker has them in its log.
      absl::Status aborted =
          (*producer)->Transact([&](exactly::Transaction& txn) {
            for (int i = 0; i < 10; ++i) {
              const std::string value = "aborted-" + std::to_string(i);
              if (absl::Status sent =
                      txn.Send({.topic = topic, .value = value});
                  !sent.ok()) {
                return sent;
              }
            }
            return absl::CancelledError("the payment provider said no");
          });
      std::printf("one transaction aborted on purpose: %s\n",
                  aborted.ToString().c_str());
    }
  }
  const exactly::TransactionStats stats = (*producer)->stats();
  std::printf("%d records sent in %llu committed transactions (%llu aborted)\n",
              flags.records, static_cast<unsigned long long>(stats.committed),
              static_cast<unsigned long long>(stats.aborted));
  if (absl::Status s = (*producer)->Close(); !s.ok()) {
    std::fprintf(stderr, "close: %s\n", s.ToString().c_str());
    return 1;
  }

  // Read it back. The SDK's consumer is read_committed by default.
  exactly::ConsumerOptions consumer_options;
  consumer_options.bootstrap_servers = flags.bootstrap_servers;
  consumer_options.group_id = "payments-checker-" + suffix;
  consumer_options.properties["auto.offset.reset"] = "earliest";
  auto consumer = exactly::Consumer::Create(consumer_options);
  if (!consumer.ok() || !(*consumer)->Subscribe({topic}).ok()) {
    std::fprintf(stderr, "cannot create or subscribe the consumer\n");
    return 1;
  }
  std::set<std::string> seen;
  int read = 0, aborted_seen = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // The aborted transaction lies before the last committed one, so by the
  // time all N committed records are read it would have shown up.
  while (static_cast<int>(seen.size()) < flags.records &&
         std::chrono::steady_clock::now() < deadline) {
    auto batch = (*consumer)->PollBatch(1000, std::chrono::milliseconds(200));
    if (!batch.ok()) {
      std::fprintf(stderr, "poll: %s\n", batch.status().ToString().c_str());
      continue;
    }
    for (const exactly::Message& m : *batch) {
      ++read;
      if (m.value().starts_with("aborted-")) ++aborted_seen;
      seen.insert(std::string(m.value()));
    }
  }
  // Leaves the group; the messages read are already gone.
  (*consumer)->Close().IgnoreError();
  std::printf(
      "read_committed consumer: %d records read, %zu distinct, %d from the "
      "aborted transaction\n",
      read, seen.size(), aborted_seen);
  const bool ok = read == flags.records &&
                  static_cast<int>(seen.size()) == flags.records &&
                  aborted_seen == 0;
  std::printf("%s\n", ok ? "OK: every committed record once, nothing aborted"
                         : "FAILED");
  return ok ? 0 : 1;
}
