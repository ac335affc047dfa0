// exactly-broker: the bundled Kafka-protocol broker as a program.
//
//   exactly-broker --port 0 [--data-dir DIR] [--default-partitions N]
//   [--no-auto-create-topics] [--brokers N] [--metrics-port N]
//
// Prints "bootstrap.servers=127.0.0.1:PORT" on stdout once it serves, so
// scripts can wait for that line (with --brokers N, every broker's
// host:port, comma-separated). SIGTERM and SIGINT stop it cleanly.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "admin/admin_client.h"
#include "admin/admin_server.h"
#include "admin/cluster_admin_commands.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/cluster.h"
#include "main/security_flags.h"
#include "storage/rocksdb_crc32c.h"

ABSL_FLAG(std::string, host, "127.0.0.1",
          "Address to bind (and to advertise by default).");
ABSL_FLAG(int32_t, port, 9092, "Port to listen on; 0 picks a free one.");
ABSL_FLAG(std::string, advertised_host, "",
          "Host clients are told to connect to.");
ABSL_FLAG(
    std::string, data_dir, "",
    "Directory for durable state (RocksDB); empty keeps everything in memory.");
ABSL_FLAG(int32_t, default_partitions, 1,
          "Partitions of an automatically created topic.");
ABSL_FLAG(bool, auto_create_topics, true,
          "Create unknown topics when a client asks for their metadata.");
ABSL_FLAG(int64_t, max_frame_bytes, 100 << 20,
          "Largest request frame accepted.");
ABSL_FLAG(int32_t, max_connections, 1000,
          "Connections open at once; past it new ones are closed at once.");
ABSL_FLAG(int64_t, max_in_flight_request_bytes, 100 << 20,
          "Bytes of requests read from one connection and not yet answered; "
          "past it the broker stops reading that connection until answers "
          "drain.");
ABSL_FLAG(int64_t, max_decompressed_batch_bytes, 256 << 20,
          "A compressed batch decompressing to more is refused "
          "(CORRUPT_MESSAGE).");
ABSL_FLAG(int64_t, max_frame_waste_bytes, 8 << 20,
          "Frame chunks keeping less than half their size are emptied (their "
          "batches copied out) once they waste more than this; -1 never.");
ABSL_FLAG(bool, frame_huge_pages, false,
          "Request frames of 4 KiB and more go to chunks asking for "
          "transparent huge pages; false (the default) keeps 4 KiB pages.");
ABSL_FLAG(int64_t, flush_messages, 0,
          "fsync the log after this many records (0: no count trigger).");
ABSL_FLAG(int64_t, flush_ms, 0,
          "fsync the log at this interval in ms (0: no timer).");
ABSL_FLAG(int32_t, node_id, 1, "This broker's node id.");
ABSL_FLAG(bool, verbose, false, "Log every request.");
ABSL_FLAG(bool, strict_sequence_reuse, false,
          "Answer OUT_OF_ORDER_SEQUENCE_NUMBER when a client resends sequence "
          "numbers of a batch whose transaction already ended (Kafka accepts "
          "it as a duplicate and the new records are lost); it is always "
          "logged.");
ABSL_FLAG(bool, transaction_partition_verification, true,
          "KIP-890 part 1, as Kafka 3.6+: refuse (INVALID_TXN_STATE) a "
          "transactional batch for a partition not added to its producer's "
          "transaction. Off, such a batch opens a hanging transaction that "
          "kafka-transactions.sh find-hanging / abort can end.");
ABSL_FLAG(int32_t, brokers, 1,
          "Brokers in this process, as one cluster sharing a controller "
          "(node ids 1..N, ports --port, --port+1, ... or each a free one "
          "with --port 0, one folder per broker under --data-dir). 1 is a "
          "single broker, as without the flag.");
ABSL_FLAG(int32_t, default_replication_factor, -1,
          "With --brokers N: replicas of a topic created without a "
          "replication factor; -1: min(3, N).");
ABSL_FLAG(int32_t, replica_lag_time_max_ms, 30000,
          "With --brokers N: a follower that has not caught up for this long "
          "leaves the ISR (Kafka's replica.lag.time.max.ms).");
ABSL_FLAG(int32_t, min_insync_replicas, 1,
          "min.insync.replicas for topics that do not set it: acks=all "
          "writes are refused (NOT_ENOUGH_REPLICAS) while fewer replicas are "
          "in sync.");
ABSL_FLAG(int32_t, log_cleaner_backoff_ms, 15000,
          "How often the log cleaner looks for compacted partitions to clean "
          "(Kafka's log.cleaner.backoff.ms).");
ABSL_FLAG(int32_t, coordinator_segment_bytes, 100 << 20,
          "segment.bytes of __consumer_offsets and __transaction_state "
          "(Kafka's offsets.topic.segment.bytes): the cleaner compacts a "
          "coordinator log once it holds more than this.");
ABSL_FLAG(bool, unclean_leader_election, false,
          "With --brokers N: unclean.leader.election.enable for topics that "
          "do not set it.");
ABSL_FLAG(int32_t, group_initial_rebalance_delay_ms, 0,
          "How long the rebalance of an empty group waits for more members, "
          "as Kafka's group.initial.rebalance.delay.ms (Kafka's default: "
          "3000): one delay, and one more while members keep joining a new "
          "group, within the first member's rebalance timeout.");
ABSL_FLAG(int32_t, admin_port, -1,
          "Serve fault-injection commands on 127.0.0.1:PORT (0 picks a port, "
          "-1 disables); "
          "see docs/faults.md.");

ABSL_FLAG(int32_t, metrics_port, -1,
          "Serve Prometheus metrics at http://HOST:PORT/metrics (0 picks a "
          "port, -1 disables; with --brokers N one endpoint for all, "
          "labelled broker=<node id>). Needs a build with prometheus-cpp.");

namespace {

// Kafka-style dashed flags (--data-dir, --no-auto-create-topics) become
// Abseil's spelling
// (--data_dir, --noauto_create_topics); both are accepted.
std::vector<std::string> NormalizeFlags(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& a = args[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0) continue;
    size_t end = a.find('=');
    if (end == std::string::npos) end = a.size();
    std::string name = a.substr(2, end - 2);
    if (name.rfind("no-", 0) == 0) name = "no" + name.substr(3);
    for (char& c : name) c = c == '-' ? '_' : c;
    a = "--" + name + a.substr(end);
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  // exactly-broker admin HOST:PORT COMMAND...: send one admin command, print
  // the reply.
  if (argc >= 2 && std::string(argv[1]) == "admin") {
    return exactly::broker::AdminClientMain(argc - 2, argv + 2);
  }
  absl::SetProgramUsageMessage(
      "The exactly bundled Kafka broker.\n"
      "  exactly-broker --port 0 [--data-dir DIR] [--default-partitions N] "
      "[--brokers N]\n"
      "Prints bootstrap.servers=HOST:PORT on stdout when ready.");
  std::vector<std::string> normalized = NormalizeFlags(argc, argv);
  std::vector<char*> normalized_argv;
  for (std::string& a : normalized) normalized_argv.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(normalized_argv.size()),
                         normalized_argv.data());

  // Block the stop signals in every thread; the main thread waits for them
  // below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  exactly::broker::BrokerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  int32_t port = absl::GetFlag(FLAGS_port);
  if (port < 0 || port > 65535) {
    std::fprintf(stderr, "exactly-broker: --port %d is not a port number\n",
                 port);
    return 2;
  }
  options.port = static_cast<uint16_t>(port);
  options.advertised_host = absl::GetFlag(FLAGS_advertised_host);
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.default_partitions = absl::GetFlag(FLAGS_default_partitions);
  options.auto_create_topics = absl::GetFlag(FLAGS_auto_create_topics);
  options.max_frame_bytes = absl::GetFlag(FLAGS_max_frame_bytes);
  options.max_connections = absl::GetFlag(FLAGS_max_connections);
  options.max_in_flight_request_bytes =
      absl::GetFlag(FLAGS_max_in_flight_request_bytes);
  options.max_decompressed_batch_bytes =
      absl::GetFlag(FLAGS_max_decompressed_batch_bytes);
  options.max_frame_waste_bytes = absl::GetFlag(FLAGS_max_frame_waste_bytes);
  options.frame_huge_pages = absl::GetFlag(FLAGS_frame_huge_pages);
  options.flush.every_messages = absl::GetFlag(FLAGS_flush_messages);
  options.flush.every_ms = absl::GetFlag(FLAGS_flush_ms);
  options.node_id = absl::GetFlag(FLAGS_node_id);
  options.verbose = absl::GetFlag(FLAGS_verbose);
  options.strict_sequence_reuse = absl::GetFlag(FLAGS_strict_sequence_reuse);
  options.transaction_partition_verification =
      absl::GetFlag(FLAGS_transaction_partition_verification);
  if (absl::Status s = exactly::broker::ApplySecurityFlags(options.security);
      !s.ok()) {
    std::fprintf(stderr, "exactly-broker: %s\n",
                 std::string(s.message()).c_str());
    return 2;
  }
  if (options.default_partitions < 1) {
    std::fprintf(stderr,
                 "exactly-broker: --default-partitions must be at least 1\n");
    return 2;
  }

  options.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  if (options.metrics_port < -1 || options.metrics_port > 65535) {
    std::fprintf(stderr,
                 "exactly-broker: --metrics-port %d is not a port number\n",
                 options.metrics_port);
    return 2;
  }

  options.replica_lag_time_max_ms =
      absl::GetFlag(FLAGS_replica_lag_time_max_ms);
  options.min_insync_replicas = absl::GetFlag(FLAGS_min_insync_replicas);
  options.log_cleaner_backoff_ms = absl::GetFlag(FLAGS_log_cleaner_backoff_ms);
  options.group_initial_rebalance_delay_ms =
      absl::GetFlag(FLAGS_group_initial_rebalance_delay_ms);
  options.coordinator_segment_bytes =
      absl::GetFlag(FLAGS_coordinator_segment_bytes);
  if (options.log_cleaner_backoff_ms < 1 ||
      options.coordinator_segment_bytes < 14) {
    std::fprintf(stderr,
                 "exactly-broker: --log-cleaner-backoff-ms must be at least 1 "
                 "and --coordinator-segment-bytes at least 14\n");
    return 2;
  }
  if (options.min_insync_replicas < 1) {
    std::fprintf(stderr,
                 "exactly-broker: --min-insync-replicas must be at least 1\n");
    return 2;
  }
  const int32_t brokers = absl::GetFlag(FLAGS_brokers);
  if (brokers < 1) {
    std::fprintf(stderr, "exactly-broker: --brokers must be at least 1\n");
    return 2;
  }
  if (brokers > 1 && options.port != 0 && options.port + brokers - 1 > 65535) {
    std::fprintf(stderr,
                 "exactly-broker: --port %d leaves no room for %d "
                 "brokers\n",
                 port, brokers);
    return 2;
  }

  // Which CRC-32C RocksDB will use (storage/rocksdb_crc32c.h), said before the
  // store opens so that a slow --data-dir broker shows why.
  if (!options.data_dir.empty()) {
    std::fprintf(stderr, "exactly-broker: %s\n",
                 std::string(exactly::broker::DescribeRocksDbCrc32c()).c_str());
  }

  // One broker is today's broker, on its own; several are a Cluster.
  std::unique_ptr<exactly::broker::Broker> broker;
  std::unique_ptr<exactly::broker::Cluster> cluster;
  if (brokers == 1) {
    auto started = exactly::broker::Broker::Start(options);
    if (!started.ok()) {
      std::fprintf(stderr, "exactly-broker: %s\n",
                   std::string(started.status().message()).c_str());
      return 1;
    }
    broker = std::move(*started);
  } else {
    exactly::broker::ClusterOptions cluster_options;
    cluster_options.brokers = brokers;
    cluster_options.broker = options;
    cluster_options.default_replication_factor =
        absl::GetFlag(FLAGS_default_replication_factor);
    cluster_options.unclean_leader_election =
        absl::GetFlag(FLAGS_unclean_leader_election);
    auto started = exactly::broker::Cluster::Start(cluster_options);
    if (!started.ok()) {
      std::fprintf(stderr, "exactly-broker: %s\n",
                   std::string(started.status().message()).c_str());
      return 1;
    }
    cluster = std::move(*started);
  }
  std::unique_ptr<exactly::broker::AdminServer> admin;
  if (int32_t admin_port = absl::GetFlag(FLAGS_admin_port); admin_port >= 0) {
    auto started =
        broker ? exactly::broker::AdminServer::Start(
                     *broker, "127.0.0.1", static_cast<uint16_t>(admin_port))
               : exactly::broker::AdminServer::Start(
                     [c = cluster.get()](std::string_view line) {
                       return exactly::broker::RunClusterAdminCommand(*c, line);
                     },
                     "127.0.0.1", static_cast<uint16_t>(admin_port));
    if (!started.ok()) {
      std::fprintf(stderr, "exactly-broker: %s\n",
                   std::string(started.status().message()).c_str());
      return 1;
    }
    admin = std::move(*started);
  }
  std::printf("bootstrap.servers=%s\n",
              broker ? broker->bootstrap_servers().c_str()
                     : cluster->bootstrap_servers().c_str());
  if (admin) std::printf("admin=127.0.0.1:%u\n", admin->port());
  for (const exactly::broker::ListenerOptions& l : options.security.listeners) {
    std::printf(
        "listener.%s=%s\n",
        std::string(exactly::broker::SecurityProtocolName(l.protocol)).c_str(),
        broker ? broker->bootstrap_servers(l.protocol).c_str()
               : cluster->bootstrap_servers(l.protocol).c_str());
  }
  // After the bootstrap line, which scripts read first.
  if (int32_t metrics_port =
          broker ? broker->metrics_port() : cluster->metrics_port();
      metrics_port >= 0) {
    std::printf("metrics=http://%s:%d/metrics\n", options.host.c_str(),
                metrics_port);
  }
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::fprintf(stderr, "exactly-broker: stopping on signal %d\n", signal);
  admin.reset();
  absl::Status s = broker ? broker->Stop() : cluster->Stop();
  if (!s.ok()) {
    std::fprintf(stderr, "exactly-broker: %s\n",
                 std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
