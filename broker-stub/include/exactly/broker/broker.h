// The bundled broker, embeddable: a Kafka-protocol broker that runs inside a
// test's process.
//
//   auto broker = exactly::broker::Broker::Start({});          // in memory,
//   ephemeral port std::string servers = (*broker)->bootstrap_servers();     //
//   "127.0.0.1:PORT"
//   (*broker)->CreateTopic("orders", 3);
//   ... produce and consume with any Kafka client ...
//   auto batches = (*broker)->ReadLog("orders", 0);            // assert on
//   what was stored
//
// The broker runs its own event-loop thread; every method here is thread-safe
// and may be called from any thread except from inside a broker callback.
#ifndef EXACTLY_BROKER_BROKER_H_
#define EXACTLY_BROKER_BROKER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exactly/broker/faults.h"
#include "exactly/broker/security.h"

namespace exactly::broker {

// When the broker forces its write-ahead log to stable storage (fsync), like
// Kafka's log.flush.interval.messages / log.flush.interval.ms. Whatever the
// policy, an append is written to the OS before it is acknowledged, so killing
// the broker process loses nothing; the policy decides what a power loss (see
// Faults::PowerLoss) may lose.
struct FlushPolicy {
  int64_t every_messages =
      0;  // sync after this many appended records; 0: no count trigger
  int64_t every_ms = 0;  // sync at this interval; 0: no timer
  // Both 0 means never sync explicitly (Kafka's default: rely on replication
  // and the OS).
};

struct BrokerOptions {
  std::string host = "127.0.0.1";  // the address to bind
  uint16_t port = 0;               // 0 picks a free port
  // The host clients are told to connect to (Metadata); empty means `host`.
  std::string advertised_host;
  // Empty keeps everything in memory; otherwise a RocksDB database in this
  // directory holds topics, records, producer states, transactions and group
  // offsets across restarts.
  std::string data_dir;
  int32_t node_id = 1;
  std::string cluster_id = "exactly-bundled-broker";
  int32_t default_partitions = 1;
  bool auto_create_topics = true;
  // Frames larger than this are refused before any memory is allocated for
  // them.
  int64_t max_frame_bytes = 100 << 20;
  // Connections open at once; past it a new connection is closed as soon as
  // it is accepted, and the broker logs why (Kafka's max.connections).
  int32_t max_connections = 1000;
  // Bytes of requests read from one connection and not yet answered; past it
  // the broker stops reading that connection until its answers drain, so a
  // client that stops reading its responses stalls only itself.
  int64_t max_in_flight_request_bytes = 100 << 20;
  // A compressed batch whose records decompress to more than this is refused
  // (CORRUPT_MESSAGE, saying so) before it is decompressed further.
  int64_t max_decompressed_batch_bytes = 256 << 20;
  // Memory for the log stays within 2 x its bytes + 50 MB whatever the
  // requests: a stored batch usually stays in the request frame it arrived in,
  // and frame chunks that keep less than half their size are emptied (their
  // batches copied out) once together they waste more than this. -1 never
  // empties one: zero-copy at any memory cost, for benchmarks.
  int64_t max_frame_waste_bytes = 8 << 20;
  // Request frames of 4 KiB and more are read into chunks that keep 4 KiB
  // pages; true asks for transparent huge pages, which fault in faster on
  // some machines and 3-7 times slower on hosts that take back free 2 MiB
  // blocks (README, "Against Apache Kafka").
  bool frame_huge_pages = false;
  FlushPolicy flush;
  // Group coordinator: how long the rebalance of an empty group waits for more
  // members (Kafka's group.initial.rebalance.delay.ms, Kafka's default 3000),
  // as Kafka waits: one delay, then one more for as long as members keep
  // joining a new group, all within the first member's rebalance timeout.
  int32_t group_initial_rebalance_delay_ms = 0;
  // The session timeouts JoinGroup accepts (Kafka's
  // group.min/max.session.timeout.ms). The minimum is below Kafka's 6000 so
  // that tests notice a killed consumer sooner.
  int32_t group_min_session_timeout_ms = 1000;
  int32_t group_max_session_timeout_ms = 1800000;
  // Transaction coordinator.
  int32_t transaction_max_timeout_ms = 900000;
  int32_t transaction_abort_check_interval_ms = 1000;
  // A batch acknowledged as a duplicate of one whose transaction has already
  // ended means the client reuses sequence numbers (new records would be
  // lost). Kafka acknowledges it silently; the broker always logs it and
  // records it in faults().History(), and in strict mode answers
  // OUT_OF_ORDER_SEQUENCE_NUMBER instead, so a test catches such a client.
  bool strict_sequence_reuse = false;
  // KIP-890 part 1 (Kafka's transaction.partition.verification.enable, on by
  // default since 3.6): before a transactional batch opens a transaction on a
  // partition, the partition leader checks with the transaction coordinator
  // that the partition was added to that producer's ongoing transaction, and
  // refuses it with INVALID_TXN_STATE otherwise. Off, such a batch is stored
  // and its open transaction holds back read_committed readers until it is
  // aborted (Broker::AbortTransaction).
  bool transaction_partition_verification = true;
  // In a cluster: a follower that has not caught up with its leader for this
  // long leaves the ISR (Kafka's replica.lag.time.max.ms, default 30 s).
  int32_t replica_lag_time_max_ms = 30000;
  // min.insync.replicas for topics that do not set their own (Kafka's broker
  // config of that name; default 1): with acks=all, a write is refused with
  // NOT_ENOUGH_REPLICAS while fewer replicas are in sync.
  int32_t min_insync_replicas = 1;
  // The log cleaner (topics with cleanup.policy=compact, the coordinators'
  // topics among them) looks for partitions to compact this often (Kafka's
  // log.cleaner.backoff.ms).
  int32_t log_cleaner_backoff_ms = 15000;
  // segment.bytes of __consumer_offsets and __transaction_state (Kafka's
  // offsets.topic.segment.bytes and transaction.state.log.segment.bytes, both
  // 100 MiB): the cleaner never touches the last segment, so a coordinator
  // log is compacted once it holds more than this.
  int32_t coordinator_segment_bytes = 100 << 20;
  // Log every request and response at debug level; faults and errors are always
  // logged.
  bool verbose = false;
  // Serves Prometheus metrics (GET /metrics on `host`) on this port: offsets
  // per partition, requests by API, transactions by outcome, faults injected.
  // -1: off; 0 picks a free port (metrics_port() tells which). Start fails
  // when exactly was built without prometheus-cpp. In a Cluster this is the
  // port of the cluster's one endpoint, where every broker's samples carry
  // broker="<node id>".
  int32_t metrics_port = -1;
  // TLS, SASL (and ACLs): off unless configured; see security.h.
  SecurityOptions security;
};

// A record as the broker stored it, for assertions in tests.
struct LoggedRecord {
  int64_t offset = 0;
  int64_t timestamp = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

// A record batch as the broker stored it.
struct LoggedBatch {
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  bool transactional = false;
  bool control = false;
  // For a control batch: true for a COMMIT marker, false for ABORT.
  bool commit_marker = false;
  std::string compression;  // "none", "gzip", ...
  std::vector<LoggedRecord> records;
};

struct PartitionOffsets {
  int64_t log_start_offset = 0;
  int64_t high_watermark = 0;
  int64_t last_stable_offset = 0;
  int64_t log_end_offset = 0;
};

// What a coordinator coordinates: a consumer group or a transactional id
// (FindCoordinator's key_type, 0 and 1).
enum class CoordinatorKey { kGroup = 0, kTransaction = 1 };

// One producer a partition knows (what DescribeProducers answers, KIP-664).
struct ActiveProducer {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t last_sequence = -1;
  int64_t last_timestamp = -1;     // of its last batch; -1 when none is kept
  int32_t coordinator_epoch = -1;  // of its last marker; -1 before any
  // The first offset of its open transaction here; -1 when none is open (a
  // hanging transaction is one that stays open).
  int64_t current_txn_start_offset = -1;
};

// The memory the broker holds for its logs (see docs/architecture.md, "Where
// frames live"): frame_bytes + copied_bytes <= 2 * retained_bytes + 50 MB.
struct LogMemory {
  int64_t retained_bytes = 0;  // record batches in the logs
  int64_t frame_bytes = 0;     // request-frame chunks mapped, spares included
  int64_t kept_in_frames = 0;  // of retained_bytes, those inside frame chunks
  int64_t copied_bytes = 0;  // of retained_bytes, those in buffers of their own
};

// One SCRAM credential a user has: what DescribeUserScramCredentials shows.
struct ScramCredentialInfo {
  std::string user;
  std::string mechanism;  // "SCRAM-SHA-256" or "SCRAM-SHA-512"
  int32_t iterations = 0;
  bool operator==(const ScramCredentialInfo&) const = default;
};

class BrokerImpl;
class Cluster;
class Authorizer;
class Controller;
class CredentialStore;
struct BrokerSample;

class Broker {
 public:
  // Starts a broker: opens (or creates) its data dir, binds, and serves on its
  // own thread.
  static absl::StatusOr<std::unique_ptr<Broker>> Start(BrokerOptions options);
  // Stops the broker cleanly (as Stop()).
  ~Broker();

  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // "127.0.0.1:PORT", ready for bootstrap.servers.
  std::string bootstrap_servers() const;
  uint16_t port() const;
  // The same for the listener of `protocol` (SecurityOptions::listeners);
  // empty / 0 when there is none.
  std::string bootstrap_servers(SecurityProtocol protocol) const;
  uint16_t port(SecurityProtocol protocol) const;
  const BrokerOptions& options() const;
  // The port of this broker's metrics endpoint; -1 when it serves none (the
  // default, and a Cluster's brokers: see Cluster::metrics_port()).
  int32_t metrics_port() const;

  // Creates a topic; AlreadyExists if it exists.
  absl::Status CreateTopic(
      std::string_view name, int32_t partitions,
      const std::map<std::string, std::string>& configs = {});
  // The same with `replication_factor` replicas per partition (-1: the
  // cluster's default); InvalidArgument, naming Kafka's error, when the
  // cluster cannot place them.
  absl::Status CreateTopic(std::string_view name, int32_t partitions,
                           int32_t replication_factor,
                           const std::map<std::string, std::string>& configs);
  std::vector<std::string> ListTopics() const;
  // Every batch of a partition's log, records decoded, in offset order (below
  // the log end, including records not yet visible to readers).
  absl::StatusOr<std::vector<LoggedBatch>> ReadLog(std::string_view topic,
                                                   int32_t partition) const;
  absl::StatusOr<PartitionOffsets> Offsets(std::string_view topic,
                                           int32_t partition) const;
  // The committed offset of (group, topic, partition), if any.
  absl::StatusOr<std::optional<int64_t>> CommittedOffset(
      std::string_view group, std::string_view topic, int32_t partition) const;

  // Aborts the transaction `producer_id` has open on a partition by writing
  // an ABORT marker there, as Kafka's admin abortTransaction does (KIP-664):
  // the way out of a hanging transaction, one whose coordinator will never
  // end it (stored with transaction_partition_verification off). Returns the
  // marker's offset; NotFound when the producer has no open transaction there.
  absl::StatusOr<int64_t> AbortTransaction(std::string_view topic,
                                           int32_t partition,
                                           int64_t producer_id);

  // The producers a partition knows, by producer id, with where each one's
  // open transaction starts: how to find a hanging transaction (the
  // DescribeProducers API answers the same).
  absl::StatusOr<std::vector<ActiveProducer>> DescribeProducers(
      std::string_view topic, int32_t partition) const;

  // SASL SCRAM credentials, as AlterUserScramCredentials sets them (and
  // with the same checks: a user name, mechanism "SCRAM-SHA-256" or
  // "SCRAM-SHA-512", iterations in [4096, 16384]; InvalidArgument
  // otherwise): the next authentication checks them, on every broker of a
  // cluster. A fresh random salt each time. Kept across restarts.
  absl::Status SetScramCredential(std::string_view user,
                                  std::string_view mechanism,
                                  std::string_view password,
                                  int32_t iterations = 4096);
  // NotFound when the user has no credential of that mechanism.
  absl::Status DeleteScramCredential(std::string_view user,
                                     std::string_view mechanism);
  // Every SCRAM credential, by user then mechanism.
  std::vector<ScramCredentialInfo> ScramCredentials() const;

  // What the logs hold and the memory that holds them.
  LogMemory GetLogMemory() const;

  // Fault injection: see exactly/broker/faults.h.
  Faults& faults();

  // Stops serving: closes every connection and the store. Idempotent.
  absl::Status Stop();

  // Restarts on the same port, keeping the data dir (an in-memory broker
  // restarts empty). kClean shuts down as Stop() does; kCrash skips all
  // shutdown work, as a killed process would; kPowerLoss also discards whatever
  // was written since the last sync (flush policy), as the OS page cache would
  // lose it.
  enum class RestartMode { kClean, kCrash, kPowerLoss };
  absl::Status Restart(RestartMode mode);

  // Whether it serves (false after Stop(), or a Cluster's Kill()).
  bool running() const;

 private:
  friend class Cluster;
  // A broker of a Cluster, following `controller`, checking requests with
  // the cluster's `authorizer` (null when off) and authenticating users
  // with the cluster's `credentials` (null: its own, from the options).
  static absl::StatusOr<std::unique_ptr<Broker>> StartInCluster(
      BrokerOptions options, std::shared_ptr<Controller> controller,
      std::shared_ptr<Authorizer> authorizer = nullptr,
      std::shared_ptr<CredentialStore> credentials = nullptr);
  // For Cluster::Kill, Isolate, Heal and PauseReplication
  // (exactly/broker/cluster.h).
  absl::Status Kill();
  absl::Status SetIsolated(bool isolated);
  // Faults::PauseReplication, and the fetches in flight dropped.
  absl::Status PauseReplication();
  // For Cluster::KillCoordinator: the node id this broker names as the
  // coordinator of `key`, as its FindCoordinator would; Unavailable when that
  // broker is fenced or none is known, FailedPrecondition when this one is
  // not running.
  absl::StatusOr<int32_t> CoordinatorOf(CoordinatorKey kind,
                                        std::string_view key);
  // What the metrics endpoint shows of this broker now (any thread).
  BrokerSample SampleMetrics() const;
  explicit Broker(std::unique_ptr<BrokerImpl> impl);
  std::unique_ptr<BrokerImpl> impl_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_BROKER_H_
