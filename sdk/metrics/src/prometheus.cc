#include "exactly/prometheus.h"

#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"

namespace exactly {

using Source = std::variant<const Producer*, const TransactionalProducer*,
                            const SpooledProducer*, const Processor*>;

struct PrometheusCollector::State {
  struct Client {
    std::string name;
    Source source;
  };
  std::mutex mu;  // held for a whole scrape, and to unregister
  uint64_t next_id = 1;
  std::map<uint64_t, Client> clients;  // by registration id
};

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

double Seconds(std::chrono::microseconds us) {
  return static_cast<double>(us.count()) / 1e6;
}

// The families of one scrape, in the order they were first named.
class Families {
 public:
  void Counter(const std::string& name, const std::string& help,
               std::vector<ClientMetric::Label> labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = value;
    Family(name, help, MetricType::Counter).metric.push_back(std::move(m));
  }

  void Gauge(const std::string& name, const std::string& help,
             std::vector<ClientMetric::Label> labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = value;
    Family(name, help, MetricType::Gauge).metric.push_back(std::move(m));
  }

  void Histogram(const std::string& name, const std::string& help,
                 std::vector<ClientMetric::Label> labels,
                 ClientMetric::Histogram histogram) {
    ClientMetric m;
    m.label = std::move(labels);
    m.histogram = std::move(histogram);
    Family(name, help, MetricType::Histogram).metric.push_back(std::move(m));
  }

  std::vector<MetricFamily> Take() && { return std::move(families_); }

 private:
  MetricFamily& Family(const std::string& name, const std::string& help,
                       MetricType type) {
    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) {
      families_.push_back(MetricFamily{name, help, type, {}});
    }
    return families_[it->second];
  }

  std::vector<MetricFamily> families_;
  std::map<std::string, size_t> index_;
};

std::vector<ClientMetric::Label> ClientLabel(const std::string& client) {
  return {{"client", client}};
}

void AddProducer(Families& f, const std::string& client,
                 const ProducerStats& s) {
  f.Counter("exactly_producer_delivered_records_total",
            "Records whose delivery report said they were written",
            ClientLabel(client), static_cast<double>(s.delivered));
  f.Counter("exactly_producer_failed_records_total",
            "Records whose delivery report carried an error",
            ClientLabel(client), static_cast<double>(s.failed));
  f.Gauge("exactly_producer_queue_records",
          "Records (and librdkafka requests) sent and not yet reported: "
          "librdkafka's out queue",
          ClientLabel(client), static_cast<double>(s.in_flight));
  f.Counter("exactly_producer_callback_errors_total",
            "Exceptions thrown by delivery callbacks", ClientLabel(client),
            static_cast<double>(s.callback_errors));
}

void AddTransactions(Families& f, const std::string& client,
                     const TransactionStats& s) {
  const auto label = ClientLabel(client);
  f.Counter("exactly_transactions_committed_total", "Transactions committed",
            label, static_cast<double>(s.committed));
  f.Counter("exactly_transactions_aborted_total",
            "Transactions aborted (by Abort() or by Transact)", label,
            static_cast<double>(s.aborted));
  f.Counter("exactly_transaction_reruns_total",
            "Times Transact ran its function again after an abort", label,
            static_cast<double>(s.reruns));
  f.Counter("exactly_transaction_retries_total",
            "Transactional calls repeated after a retriable error", label,
            static_cast<double>(s.retries));
  f.Counter("exactly_transactional_producer_rebuilds_total",
            "Rebuild() calls that succeeded", label,
            static_cast<double>(s.rebuilds));
  f.Counter("exactly_transactional_producer_epoch_bumps_total",
            "Transactions begun with a new producer epoch", label,
            static_cast<double>(s.epoch_bumps));
  f.Gauge("exactly_transactional_producer_fenced",
          "1 once a newer instance with the same transactional.id fenced "
          "this one (final)",
          label, s.fenced ? 1 : 0);
  ClientMetric::Histogram h;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kCommitLatencyBounds.size(); ++i) {
    cumulative += s.commit_latency_counts[i];
    h.bucket.push_back({cumulative, Seconds(kCommitLatencyBounds[i])});
  }
  cumulative += s.commit_latency_counts.back();
  h.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
  h.sample_count = cumulative;
  h.sample_sum = Seconds(s.commit_latency_sum);
  f.Histogram("exactly_transaction_commit_latency_seconds",
              "How long each Commit() that committed took", label,
              std::move(h));
}

void AddSpool(Families& f, const std::string& client, const SpoolMetrics& m) {
  const auto label = ClientLabel(client);
  f.Gauge("exactly_spool_depth_records",
          "Records in the spool: not yet committed to Kafka", label,
          static_cast<double>(m.depth));
  f.Gauge("exactly_spool_bytes", "The stored size of the records spooled",
          label, static_cast<double>(m.bytes));
  f.Gauge("exactly_spool_oldest_record_age_seconds",
          "Age of the oldest record in the spool (0 if empty)", label,
          static_cast<double>(m.oldest_age.count()) / 1e3);
  f.Gauge("exactly_spool_disk_bytes", "The spool database's WAL and SST files",
          label, static_cast<double>(m.disk_bytes));
  f.Counter("exactly_spool_appended_records_total",
            "Records accepted by Send, SendBatch and SendAsync", label,
            static_cast<double>(m.appended));
  f.Counter("exactly_spool_sent_records_total",
            "Records handed to the producer by the drainer (re-sends "
            "included)",
            label, static_cast<double>(m.sent));
  f.Counter("exactly_spool_committed_records_total",
            "Records committed to Kafka and deleted from the spool", label,
            static_cast<double>(m.committed));
  f.Counter("exactly_spool_transactions_total",
            "Transactions (batches, at-least-once) the drainer committed",
            label, static_cast<double>(m.transactions));
  f.Counter("exactly_spool_group_commits_total",
            "Spool writes (one WAL sync each under SyncPolicy::kAlways); "
            "appended / group commits is their mean size",
            label, static_cast<double>(m.group_commits));
  f.Counter("exactly_spool_recoveries_total",
            "Times the drainer learnt the committed watermark anew", label,
            static_cast<double>(m.recoveries));
  f.Counter("exactly_spool_drainer_errors_total",
            "Failed drainer transactions or recoveries (each retried)", label,
            static_cast<double>(m.drainer_errors));
  f.Gauge("exactly_spool_last_commit_latency_seconds",
          "The drainer's last commit", label, Seconds(m.last_commit_latency));
  f.Gauge("exactly_spool_max_commit_latency_seconds",
          "The drainer's slowest commit since the spool opened", label,
          Seconds(m.max_commit_latency));
  f.Gauge("exactly_spool_mean_commit_latency_seconds",
          "The drainer's mean commit time since the spool opened", label,
          Seconds(m.mean_commit_latency));
  f.Gauge("exactly_spool_quarantined_records",
          "Records in the quarantine (damaged or missing), earlier "
          "instances' included",
          label, static_cast<double>(m.quarantined));
  f.Gauge("exactly_spool_next_sequence", "The next sequence to hand out", label,
          static_cast<double>(m.next_sequence));
  f.Gauge("exactly_spool_committed_sequence",
          "The last sequence committed to Kafka", label,
          static_cast<double>(m.committed_sequence));
  f.Gauge("exactly_spool_drainer_up",
          "1 while the drainer runs, 0 once it stopped for good (fenced)",
          label, m.drainer_status.ok() ? 1 : 0);
}

void AddProcessor(Families& f, const std::string& client,
                  const ProcessorStats& s) {
  const auto label = ClientLabel(client);
  f.Counter("exactly_processor_input_records_total",
            "Input records whose offsets were committed", label,
            static_cast<double>(s.records_in));
  f.Counter("exactly_processor_output_records_total",
            "Output records committed", label,
            static_cast<double>(s.records_out));
  f.Counter("exactly_processor_transactions_committed_total",
            "Batches committed (one transaction each)", label,
            static_cast<double>(s.transactions_committed));
  f.Counter("exactly_processor_transactions_aborted_total", "Batches aborted",
            label, static_cast<double>(s.transactions_aborted));
  f.Counter("exactly_processor_batches_replayed_total",
            "Batches transformed again after an abort", label,
            static_cast<double>(s.batches_replayed));
  for (const TopicPartitionOffset& tpo : s.committed_offsets) {
    f.Gauge("exactly_processor_committed_offset",
            "The next input offset to read, as last committed",
            {{"client", client},
             {"topic", tpo.topic},
             {"partition", absl::StrCat(tpo.partition)}},
            static_cast<double>(tpo.offset));
  }
}

// The kind of client, for the uniqueness of names.
size_t Kind(const Source& source) { return source.index(); }

}  // namespace

PrometheusCollector::Registration::Registration(Registration&& other) noexcept
    : state_(std::move(other.state_)), id_(std::exchange(other.id_, 0)) {}

PrometheusCollector::Registration& PrometheusCollector::Registration::operator=(
    Registration&& other) noexcept {
  if (this != &other) {
    Reset();
    state_ = std::move(other.state_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void PrometheusCollector::Registration::Reset() {
  if (id_ == 0) return;
  if (std::shared_ptr<State> state = state_.lock()) {
    std::lock_guard<std::mutex> lock(state->mu);
    state->clients.erase(id_);
  }
  state_.reset();
  id_ = 0;
}

PrometheusCollector::PrometheusCollector()
    : state_(std::make_shared<State>()) {}

PrometheusCollector::~PrometheusCollector() = default;

namespace {

absl::StatusOr<uint64_t> Add(PrometheusCollector::State& state,
                             std::string name, Source source) {
  if (name.empty()) {
    return absl::InvalidArgumentError("a client needs a name (its label)");
  }
  std::lock_guard<std::mutex> lock(state.mu);
  for (const auto& [id, client] : state.clients) {
    if (client.name == name && Kind(client.source) == Kind(source)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "a client of this kind is already registered as \"", name, "\""));
    }
  }
  const uint64_t id = state.next_id++;
  state.clients.emplace(
      id, PrometheusCollector::State::Client{std::move(name), source});
  return id;
}

}  // namespace

absl::StatusOr<PrometheusCollector::Registration> PrometheusCollector::Register(
    std::string client, const Producer& producer) {
  absl::StatusOr<uint64_t> id = Add(*state_, std::move(client), &producer);
  if (!id.ok()) return id.status();
  return Registration(state_, *id);
}

absl::StatusOr<PrometheusCollector::Registration> PrometheusCollector::Register(
    std::string client, const TransactionalProducer& producer) {
  absl::StatusOr<uint64_t> id = Add(*state_, std::move(client), &producer);
  if (!id.ok()) return id.status();
  return Registration(state_, *id);
}

absl::StatusOr<PrometheusCollector::Registration> PrometheusCollector::Register(
    std::string client, const SpooledProducer& spool) {
  absl::StatusOr<uint64_t> id = Add(*state_, std::move(client), &spool);
  if (!id.ok()) return id.status();
  return Registration(state_, *id);
}

absl::StatusOr<PrometheusCollector::Registration> PrometheusCollector::Register(
    std::string client, const Processor& processor) {
  absl::StatusOr<uint64_t> id = Add(*state_, std::move(client), &processor);
  if (!id.ok()) return id.status();
  return Registration(state_, *id);
}

std::vector<prometheus::MetricFamily> PrometheusCollector::Collect() const {
  Families families;
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& [id, client] : state_->clients) {
    const std::string& name = client.name;
    if (auto* p = std::get_if<const Producer*>(&client.source)) {
      AddProducer(families, name, (*p)->stats());
    } else if (auto* t =
                   std::get_if<const TransactionalProducer*>(&client.source)) {
      AddProducer(families, name, (*t)->producer_stats());
      AddTransactions(families, name, (*t)->stats());
    } else if (auto* s = std::get_if<const SpooledProducer*>(&client.source)) {
      AddSpool(families, name, (*s)->metrics());
    } else if (auto* r = std::get_if<const Processor*>(&client.source)) {
      AddProcessor(families, name, (*r)->stats());
    }
  }
  return std::move(families).Take();
}

}  // namespace exactly
