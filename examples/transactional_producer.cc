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
#include "example_support.h"

namespace {

struct Flags {
  std::string bootstrap_servers;
  int records = 10000;
  int per_transaction = 500;
};

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!exactly::examples::ParseFlags(
          argc, argv,
          {{"--bootstrap-servers", &flags.bootstrap_servers},
           {"--records", &flags.records},
           {"--per-transaction", &flags.per_transaction}}) ||
      !(flags.records > 0 && flags.per_transaction > 0)) {
    std::fprintf(stderr,
                 "usage: %s [--bootstrap-servers HOST:PORT] [--records N] "
                 "[--per-transaction K]\n",
                 argv[0]);
    return 2;
  }
  const std::string suffix = std::to_string(std::random_device{}() % 100000);
  const std::string topic = "payments-" + suffix;

  std::unique_ptr<exactly::broker::Broker> broker;
  if (!exactly::examples::StartBundledBrokerUnlessGiven(flags.bootstrap_servers,
                                                        broker)) {
    return 1;
  }
  if (broker != nullptr) {
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

  // Read it back. The SDK's consumer is read_committed by default. The
  // aborted transaction lies before the last committed one, so by the time
  // all N committed records are read it would have shown up.
  std::set<std::string> seen;
  int read = 0, aborted_seen = 0;
  if (!exactly::examples::ReadTopic(
          flags.bootstrap_servers, topic, "payments-checker-" + suffix,
          std::chrono::seconds(60),
          [&](const exactly::Message& m) {
            ++read;
            if (m.value().starts_with("aborted-")) ++aborted_seen;
            seen.insert(std::string(m.value()));
          },
          [&] { return static_cast<int>(seen.size()) >= flags.records; })) {
    return 1;
  }
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
