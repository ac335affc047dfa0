// The exactly-once processor: consume, transform, produce, and commit the
// input offsets in the same transaction as the output. Every input record
// affects the committed output exactly once, even when the processor stops
// half-way and another instance takes over.
//
//   exactly_once_processor [--bootstrap-servers HOST:PORT] [--records N]
//
// It writes N orders to a fresh input topic, then runs two processor
// instances one after the other: the first turns about half of the orders
// into invoices and stops, the second (same group, same transactional.id)
// resumes from the committed offsets. Then it reads the invoices with a
// read_committed consumer and checks: N invoices, one per order. With no
// --bootstrap-servers it starts the bundled broker in this process, which
// also drops one produce response in 20, so that the producer retries.
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
  int records = 5000;
};

// Runs one processor instance until `stop_after` inputs are committed in
// total (`done` counts across instances). Returns false on an error.
bool RunProcessor(const exactly::ProcessorOptions& options,
                  const std::string& output_topic, uint64_t stop_after,
                  uint64_t& done) {
  // The transform may run more than once for an input (an aborted batch is
  // transformed again); only one run's output is committed. So it only
  // emits records, no other side effects.
  auto processor = exactly::Processor::Create(
      options,
      [&output_topic](const exactly::Message& order, exactly::Emitter& out) {
        std::string invoice = "invoice-for-" + std::string(order.value());
        return out.Send(
            {.topic = output_topic, .key = order.key(), .value = invoice});
      });
  if (!processor.ok()) {
    std::fprintf(stderr, "create processor: %s\n",
                 processor.status().ToString().c_str());
    return false;
  }
  const uint64_t before = done;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(120);
  // RunOnce() is one batch = one transaction. Run() would loop until Stop().
  while (done < stop_after && std::chrono::steady_clock::now() < deadline) {
    if (absl::Status s = (*processor)->RunOnce(); !s.ok()) {
      std::fprintf(stderr, "processor: %s\n", s.ToString().c_str());
      return false;
    }
    done = before + (*processor)->stats().records_in;
  }
  const exactly::ProcessorStats stats = (*processor)->stats();
  std::printf(
      "processor instance: %llu orders in, %llu invoices out, %llu "
      "transactions committed, %llu aborted\n",
      static_cast<unsigned long long>(stats.records_in),
      static_cast<unsigned long long>(stats.records_out),
      static_cast<unsigned long long>(stats.transactions_committed),
      static_cast<unsigned long long>(stats.transactions_aborted));
  // Close() leaves the group; the next instance gets the partitions and
  // starts at the offsets committed with the last transaction.
  return (*processor)->Close().ok() && done >= stop_after;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!exactly::examples::ParseFlags(
          argc, argv,
          {{"--bootstrap-servers", &flags.bootstrap_servers},
           {"--records", &flags.records}}) ||
      !(flags.records > 1)) {
    std::fprintf(stderr,
                 "usage: %s [--bootstrap-servers HOST:PORT] [--records N]\n",
                 argv[0]);
    return 2;
  }
  const std::string suffix = std::to_string(std::random_device{}() % 100000);
  const std::string orders = "orders-" + suffix;
  const std::string invoices = "invoices-" + suffix;

  std::unique_ptr<exactly::broker::Broker> broker;
  if (!exactly::examples::StartBundledBrokerUnlessGiven(flags.bootstrap_servers,
                                                        broker)) {
    return 1;
  }
  if (broker != nullptr) {
    if (!broker->CreateTopic(orders, 3).ok() ||
        !broker->CreateTopic(invoices, 3).ok()) {
      std::fprintf(stderr, "cannot create the topics\n");
      return 1;
    }
    broker->faults().DropProduceResponses(-1, /*one_in=*/20);
    std::printf("started the bundled broker at %s\n",
                flags.bootstrap_servers.c_str());
  }

  // The input: N orders, written with the idempotent producer.
  {
    exactly::ProducerOptions options;
    options.bootstrap_servers = flags.bootstrap_servers;
    auto producer = exactly::Producer::Create(options);
    if (!producer.ok()) {
      std::fprintf(stderr, "create producer: %s\n",
                   producer.status().ToString().c_str());
      return 1;
    }
    for (int i = 0; i < flags.records; ++i) {
      const std::string key = "customer-" + std::to_string(i % 16);
      const std::string value = "order-" + std::to_string(i);
      if (!(*producer)
               ->Send({.topic = orders, .key = key, .value = value})
               .ok()) {
        return 1;
      }
    }
    if (absl::Status s = (*producer)->Flush(std::chrono::seconds(60));
        !s.ok()) {
      std::fprintf(stderr, "flush: %s\n", s.ToString().c_str());
      return 1;
    }
    std::printf("wrote %d orders\n", flags.records);
  }

  exactly::ProcessorOptions options;
  options.bootstrap_servers = flags.bootstrap_servers;
  options.group_id = "invoicer-" + suffix;
  options.input_topics = {orders};
  // Stable across restarts of this instance: the next one fences a zombie.
  options.transactional_id = "invoicer-" + suffix + "-0";
  options.max_batch_records = 200;
  options.consumer_properties["auto.offset.reset"] = "earliest";
  uint64_t done = 0;
  const uint64_t n = static_cast<uint64_t>(flags.records);
  if (!RunProcessor(options, invoices, n / 2, done) ||
      !RunProcessor(options, invoices, n, done)) {
    return 1;
  }

  // Check the output as a downstream service would see it.
  std::set<std::string> distinct;
  int read = 0;
  if (!exactly::examples::ReadTopic(
          flags.bootstrap_servers, invoices, "invoice-checker-" + suffix,
          std::chrono::seconds(60),
          [&](const exactly::Message& m) {
            ++read;
            distinct.insert(std::string(m.value()));
          },
          [&] { return read >= flags.records; })) {
    return 1;
  }
  const int missing = flags.records - static_cast<int>(distinct.size());
  const int duplicated = read - static_cast<int>(distinct.size());
  std::printf("%d invoices read: %d missing, %d duplicated\n", read, missing,
              duplicated);
  return missing == 0 && duplicated == 0 ? 0 : 1;
}
