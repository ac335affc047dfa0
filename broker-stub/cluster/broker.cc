// The embeddable broker: one event-loop thread that owns a BrokerState and a
// Server, and the thread-safe public methods that hand work to that thread.
#include "exactly/broker/broker.h"

#include <pthread.h>
#include <rocksdb/env.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/active_producers.h"
#include "cluster/appender.h"
#include "cluster/broker_state.h"
#include "cluster/cluster_membership.h"
#include "cluster/coordinator_placement.h"
#include "controller/controller.h"
#include "group/group_coordinator.h"
#include "handlers/dispatch.h"
#include "metrics/broker_counters.h"
#include "metrics/broker_sample.h"
#include "metrics/loop_probe.h"
#include "metrics/metrics_endpoint.h"
#include "protocol/record_batch.h"
#include "replication/leader_side.h"
#include "security/authorizer.h"
#include "security/credentials.h"
#include "security/scram_crypto.h"
#include "security/tls_context.h"
#include "security/validate.h"
#include "server/server.h"
#include "storage/fault_injecting_file_system.h"
#include "storage/keys.h"
#include "txn/transaction_coordinator.h"
#include "util/logging.h"

namespace exactly::broker {

class BrokerImpl {
 public:
  explicit BrokerImpl(BrokerOptions options,
                      std::shared_ptr<Controller> controller = nullptr,
                      std::shared_ptr<Authorizer> authorizer = nullptr,
                      std::shared_ptr<CredentialStore> credentials = nullptr)
      : options_(std::move(options)),
        controller_(std::move(controller)),
        authorizer_(std::move(authorizer)),
        credentials_(std::move(credentials)) {
    if (authorizer_ == nullptr && options_.security.authorizer)
      authorizer_ = NewAuthorizer(options_.security);
    if (credentials_ == nullptr)
      credentials_ = CredentialStore::WithUsers(options_.security.sasl_users);
    if (!options_.data_dir.empty()) {
      fs_ = std::make_shared<FaultInjectingFileSystem>(
          rocksdb::FileSystem::Default());
      env_ = FaultInjectingFileSystem::NewEnv(fs_);
    }
    faults_.SetHooks({
        [this] {
          Post([this] {
            for (auto& server : servers_)
              server->CloseAllConnections("injected fault");
          });
        },
        [this](int32_t ms) {
          Post([this, ms] {
            for (auto& server : servers_) server->RefuseConnectionsFor(ms);
          });
        },
        [this](std::function<void()> fn) { Post(std::move(fn)); },
    });
  }

  ~BrokerImpl() {
    faults_.SetHooks({});
    (void)Stop();
  }

  absl::Status Start(uint16_t port) {
    io_ = std::make_unique<asio::io_context>();
    absl::StatusOr<std::unique_ptr<BrokerState>> state =
        BrokerState::Open(options_, *io_, faults_, env_.get());
    if (!state.ok()) {
      io_.reset();
      return state.status();
    }
    state_ = std::move(*state);
    state_->set_counters(counters_);
    state_->set_authorizer(authorizer_);
    state_->set_credentials(credentials_);
    if (absl::Status s = Listen(port); !s.ok()) {
      servers_.clear();
      state_.reset();
      io_.reset();
      return s;
    }
    if (controller_) state_->set_controller(controller_.get());
    running_ = true;
    thread_ = std::thread([this] {
      // Named, so that top and perf tell the broker from its embedder.
      pthread_setname_np(pthread_self(), "exactly-broker");
      io_->run();
    });
    probe_.Attach(io_.get(), state_.get());
    if (controller_) JoinCluster();
    LogInfo("serving on ", options_.host, ":", port_.load(),
            options_.data_dir.empty()
                ? " (in memory)"
                : absl::StrCat(" (data dir ", options_.data_dir, ")"));
    return absl::OkStatus();
  }

  // Binds every listener: the PLAINTEXT one on `port`, then the secure ones
  // (each keeps its port across restarts).
  absl::Status Listen(uint16_t port) {
    bool needs_tls = false;
    for (const ListenerOptions& l : options_.security.listeners)
      needs_tls |= UsesTls(l.protocol);
    if (needs_tls && tls_ == nullptr) {
      absl::StatusOr<std::unique_ptr<asio::ssl::context>> tls =
          NewTlsContext(options_.security);
      if (!tls.ok()) return tls.status();
      tls_ = *std::move(tls);
    }
    auto on_request = [this](std::shared_ptr<Connection> c, SharedBuffer frame,
                             size_t size, uint64_t slot) {
      DispatchRequest(*state_, c, std::move(frame), size, slot);
    };
    const ConnectionLimits limits{
        .max_frame_bytes = options_.max_frame_bytes,
        .max_in_flight_request_bytes = options_.max_in_flight_request_bytes};
    std::map<std::string, int32_t, std::less<>> ports;
    std::vector<std::pair<SecurityProtocol, uint16_t>> extra_ports;
    for (size_t i = 0; i <= options_.security.listeners.size(); ++i) {
      ListenerOptions l{SecurityProtocol::kPlaintext, port};
      if (i > 0) l = options_.security.listeners[i - 1];
      auto server = std::make_unique<Server>(
          *io_, limits, options_.max_connections, state_->shared_frames(),
          on_request, l.protocol, UsesTls(l.protocol) ? tls_.get() : nullptr);
      if (absl::Status s = server->Listen(options_.host, l.port); !s.ok())
        return s;
      if (i > 0) {
        options_.security.listeners[i - 1].port = server->port();
        extra_ports.emplace_back(l.protocol, server->port());
      }
      ports[std::string(SecurityProtocolName(l.protocol))] = server->port();
      servers_.push_back(std::move(server));
    }
    state_->set_advertised_port(servers_[0]->port());
    state_->set_listener_ports(ports);
    port_ = servers_[0]->port();
    std::lock_guard<std::mutex> lock(listener_ports_mu_);
    listener_ports_ = std::move(extra_ports);
    return absl::OkStatus();
  }

  uint16_t ListenerPort(SecurityProtocol protocol) const {
    std::lock_guard<std::mutex> lock(listener_ports_mu_);
    for (const auto& [listener, port] : listener_ports_) {
      if (listener == protocol) return port;
    }
    return 0;
  }

  absl::Status Stop(bool clean = true) {
    if (!running_) return absl::OkStatus();
    // Scrapes stop reaching into the loop before it goes.
    probe_.Detach();
    // A broker that starts again is connected again.
    if (faults_.isolated()) {
      faults_.SetIsolated(false);
      faults_.Record("isolation ends: the broker stops");
    }
    if (controller_) LeaveCluster();
    if (clean) {
      (void)RunOnLoop([this] {
        for (auto& server : servers_) server->Stop();
        state_->commits().CommitNow();
        return absl::OkStatus();
      });
    } else {
      Post([this] {
        for (auto& server : servers_) server->Stop();
      });
    }
    io_->stop();
    thread_.join();
    running_ = false;
    isr_timer_.reset();
    servers_.clear();
    {
      std::lock_guard<std::mutex> lock(listener_ports_mu_);
      listener_ports_.clear();
    }
    state_.reset();
    io_.reset();
    // What the loop held for a fault goes as a crash would lose it (its
    // connections are gone, so nothing is answered).
    faults_.DropHeldMarkers();
    return absl::OkStatus();
  }

  absl::Status Restart(Broker::RestartMode mode) {
    bool clean = mode == Broker::RestartMode::kClean;
    LogWarning("restarting (",
               clean                                 ? "clean"
               : mode == Broker::RestartMode::kCrash ? "crash"
                                                     : "power loss",
               ")");
    faults_.RecordInjected(
        clean                                 ? "restart_clean"
        : mode == Broker::RestartMode::kCrash ? "restart_crash"
                                              : "restart_power_loss",
        absl::StrCat("restart: ", clean ? "clean"
                                  : mode == Broker::RestartMode::kCrash
                                      ? "crash-style"
                                      : "power loss"));
    if (mode == Broker::RestartMode::kPowerLoss && fs_) fs_->CutPower();
    if (absl::Status s = Stop(clean); !s.ok()) return s;
    if (mode == Broker::RestartMode::kPowerLoss && fs_) {
      if (absl::Status s = fs_->DropUnsyncedData(); !s.ok()) return s;
    }
    return Start(port_.load());
  }

  // Crash-style, as SIGKILL: no shutdown work; the controller fences it at
  // once (LeaveCluster), as it would when the broker's session expires.
  absl::Status Kill() {
    if (!running_)
      return absl::FailedPreconditionError("the broker is not running");
    faults_.RecordInjected(
        "kill", absl::StrCat("broker ", options_.node_id,
                             " killed (crash-style: no shutdown work)"));
    return Stop(/*clean=*/false);
  }

  // Cuts the broker off from clients and the other brokers, both ways, or
  // reconnects it. Isolated, it is fenced, as a Kafka broker that lost its
  // controller session is; healed, it registers again and follows.
  absl::Status SetIsolated(bool isolated) {
    if (!running_)
      return absl::FailedPreconditionError("the broker is not running");
    if (faults_.isolated() == isolated) return absl::OkStatus();
    std::string what =
        isolated
            ? absl::StrCat("broker ", options_.node_id,
                           " isolated: client and peer connections dropped "
                           "and refused, replica fetches stopped")
            : absl::StrCat("broker ", options_.node_id,
                           " healed: accepting connections, fetching again");
    // Healing ends a fault; it is no fault itself.
    if (isolated) {
      faults_.RecordInjected("isolate", std::move(what));
    } else {
      faults_.Record(std::move(what));
    }
    absl::Status s = RunOnLoop([&]() -> absl::Status {
      faults_.SetIsolated(isolated);
      if (!isolated) {
        for (auto& server : servers_) {
          if (absl::Status s = server->AcceptConnections(); !s.ok()) return s;
        }
        return absl::OkStatus();
      }
      for (auto& server : servers_) server->RefuseConnections();
      StopFollowing(*state_);
      return absl::OkStatus();
    });
    if (!s.ok() || !controller_) return s;
    if (isolated) {
      controller_->FenceBroker(options_.node_id);
    } else {
      controller_->RegisterBroker(options_.node_id, state_->advertised_host(),
                                  port_, state_->listener_ports());
    }
    return absl::OkStatus();
  }

  // Pauses replication into this broker from now on: the fetches already
  // out are dropped with their connections, so nothing they would bring
  // arrives after this returns.
  absl::Status PauseReplication() {
    faults_.PauseReplication();
    if (!running_ || !controller_) return absl::OkStatus();
    return RunOnLoop([&]() -> absl::Status {
      RestartFollowing(*state_);
      return absl::OkStatus();
    });
  }

  // Runs `fn` on the loop thread and waits for its result.
  template <class F>
  auto RunOnLoop(F fn) -> decltype(fn()) {
    using R = decltype(fn());
    if (!running_)
      return R(absl::FailedPreconditionError("the broker is not running"));
    std::promise<R> promise;
    std::future<R> result = promise.get_future();
    asio::post(*io_, [&] { promise.set_value(fn()); });
    return result.get();
  }

  // Serves this broker's metrics, when asked for and not in a cluster (the
  // Cluster serves its brokers' together).
  absl::Status StartMetrics() {
    if (options_.metrics_port < 0 || controller_) return absl::OkStatus();
    if (options_.metrics_port > 65535)
      return absl::InvalidArgumentError(absl::StrCat(
          "metrics port ", options_.metrics_port, " is not in [0, 65535]"));
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
        MetricsEndpoint::Start(options_.host,
                               static_cast<uint16_t>(options_.metrics_port),
                               {[this] { return Sample(); }});
    if (!endpoint.ok()) return endpoint.status();
    metrics_ = std::move(*endpoint);
    LogInfo("metrics on http://", options_.host, ":", metrics_->port(),
            "/metrics");
    return absl::OkStatus();
  }

  // Counters are read where they are; partitions on the loop, waiting at most
  // a second so that a scrape never hangs on a stuck or stopping broker.
  BrokerSample Sample() {
    BrokerSample s;
    s.node_id = options_.node_id;
    s.running = running_;
    s.counters = counters_->Read();
    s.faults = faults_.InjectedCounts();
    if (auto partitions = probe_.SamplePartitions(std::chrono::seconds(1)))
      s.partitions = std::move(*partitions);
    return s;
  }

  void Post(std::function<void()> fn) {
    if (running_) asio::post(*io_, std::move(fn));
  }

  // Follows the controller from now on (each snapshot is applied on the
  // loop), then registers, which may make this broker a leader again.
  void JoinCluster() {
    subscription_ = controller_->Subscribe(
        [this](std::shared_ptr<const ClusterMetadata> m) {
          Post([this, m = std::move(m)]() mutable {
            ApplyClusterMetadata(*state_, std::move(m));
          });
        });
    controller_->RegisterBroker(options_.node_id, state_->advertised_host(),
                                port_, state_->listener_ports());
    isr_timer_ = std::make_unique<asio::steady_timer>(*io_);
    Post([this] { ArmIsrCheck(); });
  }

  // Kafka's isr-expiration task: every half lag time, followers lagging for
  // longer than the lag time leave the ISR.
  void ArmIsrCheck() {
    isr_timer_->expires_after(std::chrono::milliseconds(
        std::max(1, options_.replica_lag_time_max_ms / 2)));
    isr_timer_->async_wait([this](const asio::error_code& ec) {
      if (ec) return;
      ShrinkIsrs(*state_, options_.replica_lag_time_max_ms);
      ArmIsrCheck();
    });
  }

  // Fenced first, so the controller moves this broker's leaderships while it
  // shuts down, as Kafka's controlled shutdown (and a crash, once the session
  // times out) does.
  void LeaveCluster() {
    controller_->FenceBroker(options_.node_id);
    controller_->Unsubscribe(subscription_);
  }

  BrokerOptions options_;
  std::shared_ptr<Controller> controller_;  // null: the whole cluster
  // Null when off; shared with the cluster's other brokers.
  std::shared_ptr<Authorizer> authorizer_;
  // The users SASL accepts; shared with the cluster's other brokers, and
  // kept across restarts (as Kafka keeps them in its metadata log).
  std::shared_ptr<CredentialStore> credentials_;
  int subscription_ = 0;
  std::unique_ptr<asio::steady_timer> isr_timer_;
  Faults faults_;
  std::shared_ptr<FaultInjectingFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<asio::io_context> io_;
  std::unique_ptr<BrokerState> state_;
  // The PLAINTEXT listener on options_.port first, then one per
  // SecurityOptions::listeners entry.
  std::vector<std::unique_ptr<Server>> servers_;
  std::unique_ptr<asio::ssl::context> tls_;
  std::thread thread_;
  // Read by bootstrap_servers() and port() on any thread while a restart
  // (on another) listens again.
  std::atomic<uint16_t> port_{0};
  // The other listeners' ports, for port(protocol): servers_ is rebuilt by a
  // restart while other threads may ask.
  mutable std::mutex listener_ports_mu_;
  std::vector<std::pair<SecurityProtocol, uint16_t>> listener_ports_;
  std::atomic<bool> running_{false};
  std::shared_ptr<BrokerCounters> counters_ =
      std::make_shared<BrokerCounters>();
  LoopProbe probe_;
  // Declared last, destroyed first: a scrape in progress reads the members
  // above.
  std::unique_ptr<MetricsEndpoint> metrics_;
};

namespace {

LoggedBatch ToLoggedBatch(const StoredBatch& b) {
  LoggedBatch out;
  out.base_offset = b.base_offset();
  out.last_offset = b.last_offset();
  out.producer_id = b.header.producer_id;
  out.producer_epoch = b.header.producer_epoch;
  out.base_sequence = b.header.base_sequence;
  out.transactional = b.header.is_transactional();
  out.control = b.header.is_control();
  out.compression =
      std::string(protocol::CompressionName(b.header.compression()));
  protocol::RecordBatchView view{b.header, b.bytes()};
  if (out.control) {
    absl::StatusOr<protocol::ControlType> type =
        protocol::ReadControlType(view);
    out.commit_marker = type.ok() && *type == protocol::ControlType::kCommit;
  }
  absl::StatusOr<std::vector<protocol::Record>> records =
      protocol::DecodeRecords(view);
  if (records.ok()) {
    for (protocol::Record& r : *records) {
      LoggedRecord& lr = out.records.emplace_back();
      lr.offset = r.offset;
      lr.timestamp = r.timestamp;
      lr.key = std::move(r.key);
      lr.value = std::move(r.value);
      for (auto& h : r.headers)
        lr.headers.emplace_back(std::move(h.key), std::move(h.value));
    }
  }
  return out;
}

}  // namespace

Broker::Broker(std::unique_ptr<BrokerImpl> impl) : impl_(std::move(impl)) {}

Broker::~Broker() = default;

absl::StatusOr<std::unique_ptr<Broker>> Broker::Start(BrokerOptions options) {
  return StartInCluster(std::move(options), nullptr, nullptr, nullptr);
}

absl::StatusOr<std::unique_ptr<Broker>> Broker::StartInCluster(
    BrokerOptions options, std::shared_ptr<Controller> controller,
    std::shared_ptr<Authorizer> authorizer,
    std::shared_ptr<CredentialStore> credentials) {
  SetVerboseLogging(options.verbose);
  if (options.max_frame_bytes < 1 || options.max_connections < 1 ||
      options.max_in_flight_request_bytes < 1 ||
      options.max_decompressed_batch_bytes < 1) {
    return absl::InvalidArgumentError(
        "max_frame_bytes, max_connections, max_in_flight_request_bytes and "
        "max_decompressed_batch_bytes must be positive");
  }
  if (absl::Status s = ValidateSecurityOptions(options.security); !s.ok())
    return s;
  uint16_t port = options.port;
  auto impl = std::make_unique<BrokerImpl>(
      std::move(options), std::move(controller), std::move(authorizer),
      std::move(credentials));
  if (absl::Status s = impl->Start(port); !s.ok()) return s;
  if (absl::Status s = impl->StartMetrics(); !s.ok()) return s;
  return std::unique_ptr<Broker>(new Broker(std::move(impl)));
}

std::string Broker::bootstrap_servers() const {
  std::string host = impl_->options_.advertised_host.empty()
                         ? impl_->options_.host
                         : impl_->options_.advertised_host;
  return absl::StrCat(host, ":", impl_->port_.load());
}

uint16_t Broker::port() const { return impl_->port_.load(); }

uint16_t Broker::port(SecurityProtocol protocol) const {
  return impl_->ListenerPort(protocol);
}

std::string Broker::bootstrap_servers(SecurityProtocol protocol) const {
  uint16_t p = port(protocol);
  if (p == 0) return "";
  std::string host = impl_->options_.advertised_host.empty()
                         ? impl_->options_.host
                         : impl_->options_.advertised_host;
  return absl::StrCat(host, ":", p);
}

const BrokerOptions& Broker::options() const { return impl_->options_; }

int32_t Broker::metrics_port() const {
  return impl_->metrics_ ? impl_->metrics_->port() : -1;
}

BrokerSample Broker::SampleMetrics() const { return impl_->Sample(); }

Faults& Broker::faults() { return impl_->faults_; }

absl::Status Broker::CreateTopic(
    std::string_view name, int32_t partitions,
    const std::map<std::string, std::string>& configs) {
  return CreateTopic(name, partitions, -1, configs);
}

absl::Status Broker::CreateTopic(
    std::string_view name, int32_t partitions, int32_t replication_factor,
    const std::map<std::string, std::string>& configs) {
  std::string owned(name);
  return impl_->RunOnLoop([&]() -> absl::Status {
    ApiError e = impl_->state_->CreateTopic(owned, partitions, configs, false,
                                            replication_factor);
    impl_->state_->commits().CommitNow();
    if (e.ok()) return absl::OkStatus();
    if (e.code == protocol::ErrorCode::kTopicAlreadyExists)
      return absl::AlreadyExistsError(e.message);
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(protocol::ErrorCodeName(e.code)), ": ", e.message));
  });
}

std::vector<std::string> Broker::ListTopics() const {
  absl::StatusOr<std::vector<std::string>> names =
      impl_->RunOnLoop([&]() -> absl::StatusOr<std::vector<std::string>> {
        std::vector<std::string> out;
        for (const auto& [name, topic] : impl_->state_->topics().all())
          out.push_back(name);
        return out;
      });
  return names.ok() ? *names : std::vector<std::string>{};
}

absl::StatusOr<std::vector<LoggedBatch>> Broker::ReadLog(
    std::string_view topic, int32_t partition) const {
  std::string owned(topic);
  return impl_->RunOnLoop([&]() -> absl::StatusOr<std::vector<LoggedBatch>> {
    Partition* p = impl_->state_->FindPartition(owned, partition);
    if (p == nullptr)
      return absl::NotFoundError(
          absl::StrCat("no partition ", owned, "[", partition, "]"));
    std::vector<LoggedBatch> out;
    for (const StoredBatch& b : p->log().batches())
      out.push_back(ToLoggedBatch(b));
    return out;
  });
}

absl::StatusOr<PartitionOffsets> Broker::Offsets(std::string_view topic,
                                                 int32_t partition) const {
  std::string owned(topic);
  return impl_->RunOnLoop([&]() -> absl::StatusOr<PartitionOffsets> {
    Partition* p = impl_->state_->FindPartition(owned, partition);
    if (p == nullptr)
      return absl::NotFoundError(
          absl::StrCat("no partition ", owned, "[", partition, "]"));
    return PartitionOffsets{p->log().log_start_offset(),
                            p->log().high_watermark(), p->last_stable_offset(),
                            p->log().log_end_offset()};
  });
}

absl::StatusOr<std::optional<int64_t>> Broker::CommittedOffset(
    std::string_view group, std::string_view topic, int32_t partition) const {
  std::string owned_group(group);
  std::string owned_topic(topic);
  return impl_->RunOnLoop([&]() -> absl::StatusOr<std::optional<int64_t>> {
    return impl_->state_->groups().CommittedOffset(owned_group, owned_topic,
                                                   partition);
  });
}

absl::StatusOr<int64_t> Broker::AbortTransaction(std::string_view topic,
                                                 int32_t partition,
                                                 int64_t producer_id) {
  std::string owned(topic);
  return impl_->RunOnLoop([&]() -> absl::StatusOr<int64_t> {
    BrokerState& b = *impl_->state_;
    Partition* p = b.FindPartition(owned, partition);
    if (p == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("no partition ", owned, "[", partition, "]"));
    }
    const ProducerEntry* producer = p->producers().Find(producer_id);
    if (producer == nullptr || !p->transactions().IsOpen(producer_id)) {
      return absl::NotFoundError(absl::StrCat("producer ", producer_id,
                                              " has no open transaction on ",
                                              owned, "[", partition, "]"));
    }
    // The producer's own epochs, so that Kafka's marker checks pass.
    MarkerOutcome marker = WriteTxnMarker(
        b, *p, producer_id, producer->epoch, protocol::ControlType::kAbort,
        std::max(b.transactions().coordinator_epoch(),
                 producer->coordinator_epoch));
    if (!marker.error.ok()) {
      return absl::FailedPreconditionError(marker.error.message);
    }
    LogWarning("aborted the open transaction of producer ", producer_id, " on ",
               owned, "[", partition, "] with a marker at offset ",
               marker.offset);
    return marker.offset;
  });
}

absl::StatusOr<std::vector<ActiveProducer>> Broker::DescribeProducers(
    std::string_view topic, int32_t partition) const {
  std::string owned(topic);
  return impl_->RunOnLoop([&]() -> absl::StatusOr<std::vector<ActiveProducer>> {
    const Partition* p = impl_->state_->FindPartition(owned, partition);
    if (p == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("no partition ", owned, "[", partition, "]"));
    }
    return ActiveProducers(*p);
  });
}

namespace {

absl::StatusOr<ScramAlgorithm> ScramAlgorithmOf(std::string_view mechanism) {
  std::optional<ScramAlgorithm> algorithm = ParseScramMechanism(mechanism);
  if (!algorithm)
    return absl::InvalidArgumentError(
        absl::StrCat("unknown SCRAM mechanism '", std::string(mechanism),
                     "' (SCRAM-SHA-256 or SCRAM-SHA-512)"));
  return *algorithm;
}

}  // namespace

absl::Status Broker::SetScramCredential(std::string_view user,
                                        std::string_view mechanism,
                                        std::string_view password,
                                        int32_t iterations) {
  if (user.empty())
    return absl::InvalidArgumentError("the user name must not be empty");
  absl::StatusOr<ScramAlgorithm> algorithm = ScramAlgorithmOf(mechanism);
  if (!algorithm.ok()) return algorithm.status();
  if (iterations < kMinScramIterations || iterations > kMaxScramIterations)
    return absl::InvalidArgumentError(
        absl::StrCat("iterations must be in [", kMinScramIterations, ", ",
                     kMaxScramIterations, "], not ", iterations));
  impl_->credentials_->SetScram(
      std::string(user), *algorithm,
      ScramCredentialFromPassword(*algorithm, password, scram::RandomBytes(16),
                                  iterations));
  return absl::OkStatus();
}

absl::Status Broker::DeleteScramCredential(std::string_view user,
                                           std::string_view mechanism) {
  absl::StatusOr<ScramAlgorithm> algorithm = ScramAlgorithmOf(mechanism);
  if (!algorithm.ok()) return algorithm.status();
  if (!impl_->credentials_->DeleteScram(std::string(user), *algorithm))
    return absl::NotFoundError(absl::StrCat("user '", std::string(user),
                                            "' has no ", std::string(mechanism),
                                            " credential"));
  return absl::OkStatus();
}

std::vector<ScramCredentialInfo> Broker::ScramCredentials() const {
  std::vector<ScramCredentialInfo> out;
  for (const auto& [user, credentials] : impl_->credentials_->DescribeScram())
    for (const auto& [algorithm, iterations] : credentials)
      out.push_back(
          {user, std::string(ScramMechanismName(algorithm)), iterations});
  return out;
}

LogMemory Broker::GetLogMemory() const {
  absl::StatusOr<LogMemory> m =
      impl_->RunOnLoop([&]() -> absl::StatusOr<LogMemory> {
        return impl_->state_->GetLogMemory();
      });
  return m.ok() ? *m : LogMemory{};
}

absl::Status Broker::Stop() { return impl_->Stop(); }

absl::Status Broker::Restart(RestartMode mode) { return impl_->Restart(mode); }

bool Broker::running() const { return impl_->running_; }

absl::Status Broker::Kill() { return impl_->Kill(); }

absl::Status Broker::PauseReplication() { return impl_->PauseReplication(); }

absl::StatusOr<int32_t> Broker::CoordinatorOf(CoordinatorKey kind,
                                              std::string_view key) {
  const std::string owned(key);
  // On the loop: the answer is this broker's, as FindCoordinator gives it.
  return impl_->RunOnLoop([&]() -> absl::StatusOr<int32_t> {
    const CoordinatorKind k = kind == CoordinatorKey::kGroup
                                  ? CoordinatorKind::kGroup
                                  : CoordinatorKind::kTransaction;
    // As FindCoordinator: the first question creates the coordinator's topic.
    if (ApiError e = EnsureCoordinatorTopic(*impl_->state_, k); !e.ok())
      return absl::UnavailableError(e.message);
    const CoordinatorAddress a = FindCoordinatorOf(*impl_->state_, k, owned);
    if (a.node_id < 1)
      return absl::UnavailableError(
          absl::StrCat("no broker coordinates '", owned, "'"));
    if (a.fenced)
      return absl::UnavailableError(absl::StrCat(
          "broker ", a.node_id, " coordinates '", owned, "' and is down"));
    return a.node_id;
  });
}

absl::Status Broker::SetIsolated(bool isolated) {
  return impl_->SetIsolated(isolated);
}

}  // namespace exactly::broker
