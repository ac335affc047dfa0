#include "exactly/prometheus.h"

#include <chrono>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"

namespace exactly {

using Source = std::variant<const Producer*, const TransactionalProducer*,
                            const SpooledProducer*, const Processor*>;

namespace internal {

// What a scrape exports of one librdkafka statistics report.
struct LibrdkafkaSummary {
  double msg_cnt = 0;      // messages in the producer queues
  double msg_size = 0;     // their bytes
  double replyq = 0;       // ops waiting to be served by poll
  double txmsgs = 0;       // messages sent to brokers
  double txmsg_bytes = 0;  // their bytes
  double rxmsgs = 0;       // messages received (consumed)
  struct Broker {
    // librdkafka's name for the connection: "host:port/nodeid", or the
    // coordinator's ("GroupCoordinator", "TxnCoordinator"), a connection of
    // its own to one of the brokers.
    std::string name;
    double rtt_avg = 0, rtt_p99 = 0;  // seconds
    double waitresp_cnt = 0;          // requests in flight
  };
  std::vector<Broker> brokers;
  struct Partition {
    std::string topic;
    std::string partition;
    double hi_offset = -1;
    double consumer_lag = -1;
  };
  std::vector<Partition> partitions;
};

}  // namespace internal

namespace {

using internal::LibrdkafkaSummary;

double Number(const nlohmann::json& j, const char* key, double otherwise = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}

// The summary of one report, or nothing if it is not librdkafka's JSON.
std::optional<std::pair<std::string, LibrdkafkaSummary>> Summarise(
    std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  LibrdkafkaSummary s;
  std::string type = "unknown";
  if (auto it = j.find("type"); it != j.end() && it->is_string()) {
    type = it->get<std::string>();
  }
  s.msg_cnt = Number(j, "msg_cnt");
  s.msg_size = Number(j, "msg_size");
  s.replyq = Number(j, "replyq");
  s.txmsgs = Number(j, "txmsgs");
  s.txmsg_bytes = Number(j, "txmsg_bytes");
  s.rxmsgs = Number(j, "rxmsgs");
  if (auto brokers = j.find("brokers");
      brokers != j.end() && brokers->is_object()) {
    for (const auto& [name, b] : brokers->items()) {
      // Not the bootstrap connections nor the internal pseudo-broker.
      if (Number(b, "nodeid", -1) < 0) continue;
      LibrdkafkaSummary::Broker out;
      out.name = name;
      if (auto rtt = b.find("rtt"); rtt != b.end() && rtt->is_object()) {
        out.rtt_avg = Number(*rtt, "avg") / 1e6;  // microseconds
        out.rtt_p99 = Number(*rtt, "p99") / 1e6;
      }
      out.waitresp_cnt = Number(b, "waitresp_cnt");
      s.brokers.push_back(std::move(out));
    }
  }
  if (auto topics = j.find("topics");
      topics != j.end() && topics->is_object()) {
    for (const auto& [topic, t] : topics->items()) {
      auto partitions = t.find("partitions");
      if (partitions == t.end() || !partitions->is_object()) continue;
      for (const auto& [id, p] : partitions->items()) {
        const double partition = Number(p, "partition", -1);
        if (partition < 0) continue;  // the unassigned-records pseudo-partition
        s.partitions.push_back(
            {topic, absl::StrCat(static_cast<int64_t>(partition)),
             Number(p, "hi_offset", -1), Number(p, "consumer_lag", -1)});
      }
    }
  }
  return std::make_pair(std::move(type), std::move(s));
}

}  // namespace

struct PrometheusCollector::State {
  struct Client {
    std::string name;
    Source source;
  };
  std::mutex mu;  // held for a whole scrape, and to unregister
  uint64_t next_id = 1;
  std::map<uint64_t, Client> clients;  // by registration id
  // librdkafka's statistics, by (client, type); guarded by summaries_mu
  // (a report never waits for a scrape's reading of the clients).
  std::mutex summaries_mu;
  std::map<std::pair<std::string, std::string>, internal::LibrdkafkaSummary>
      summaries;
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

double Bound(std::chrono::microseconds bound) { return Seconds(bound); }
double Bound(uint64_t bound) { return static_cast<double>(bound); }

// A histogram of `counts` (counts[i]: the samples above bounds[i - 1] and at
// most bounds[i]; the last one, above every bound), made cumulative.
template <typename Bounds, typename Counts>
ClientMetric::Histogram MakeHistogram(const Bounds& bounds,
                                      const Counts& counts, double sum) {
  static_assert(std::tuple_size_v<Counts> == std::tuple_size_v<Bounds> + 1);
  ClientMetric::Histogram h;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += counts[i];
    h.bucket.push_back({cumulative, Bound(bounds[i])});
  }
  cumulative += counts.back();
  h.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
  h.sample_count = cumulative;
  h.sample_sum = sum;
  return h;
}

// One sample per cause, labelled cause="...": they add up to the total.
template <typename Names, typename Counts>
void AddByCause(Families& f, const std::string& name, const std::string& help,
                const std::string& client, const Names& names,
                const Counts& counts) {
  for (size_t i = 0; i < names.size(); ++i) {
    f.Counter(name, help,
              {{"client", client}, {"cause", std::string(names[i])}},
              static_cast<double>(counts[i]));
  }
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
  f.Counter("exactly_producer_sent_records_total",
            "Records accepted by Send (queued; each is then reported as "
            "delivered or failed)",
            ClientLabel(client), static_cast<double>(s.sent));
}

void AddTransactions(Families& f, const std::string& client,
                     const TransactionStats& s) {
  const auto label = ClientLabel(client);
  f.Counter("exactly_transactions_committed_total", "Transactions committed",
            label, static_cast<double>(s.committed));
  AddByCause(f, "exactly_transactions_aborted_total",
             "Transactions aborted, by cause: requested (Abort()), error "
             "(Transact's function failed), abortable_error (Transact runs "
             "it again), close (Close() with one open)",
             client, kAbortCauseNames, s.aborted_by_cause);
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
  f.Histogram("exactly_transaction_commit_latency_seconds",
              "How long each Commit() that committed took", label,
              MakeHistogram(kCommitLatencyBounds, s.commit_latency_counts,
                            Seconds(s.commit_latency_sum)));
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
  f.Histogram(
      "exactly_spool_group_commit_latency_seconds",
      "How long each group commit took, from the start of its write "
      "until it was durable",
      label,
      MakeHistogram(kGroupCommitLatencyBounds, m.group_commit_latency_counts,
                    Seconds(m.group_commit_latency_sum)));
  f.Histogram("exactly_spool_group_commit_size_records",
              "Records written by each group commit", label,
              MakeHistogram(kGroupCommitSizeBounds, m.group_commit_size_counts,
                            static_cast<double>(m.appended)));
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
  AddByCause(f, "exactly_processor_transactions_aborted_total",
             "Batches aborted, by cause: error (processing stops), "
             "abortable_error (transformed again), revoked (partitions "
             "revoked), close",
             client, kProcessorAbortCauseNames, s.aborted_by_cause);
  f.Histogram("exactly_processor_batch_size_records",
              "Input records per committed batch", label,
              MakeHistogram(kBatchSizeBounds, s.batch_size_counts,
                            static_cast<double>(s.records_in)));
  f.Counter("exactly_processor_partitions_assigned_total",
            "Rebalances that assigned partitions to this member", label,
            static_cast<double>(s.partitions_assigned));
  f.Counter("exactly_processor_partitions_revoked_total",
            "Rebalances that revoked (or lost) partitions of this member",
            label, static_cast<double>(s.partitions_revoked));
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

void AddLibrdkafka(Families& f, const std::string& client,
                   const std::string& type, const LibrdkafkaSummary& s) {
  const std::vector<ClientMetric::Label> label = {{"client", client},
                                                  {"type", type}};
  f.Gauge("exactly_librdkafka_queue_messages",
          "librdkafka: messages in the producer queues (msg_cnt)", label,
          s.msg_cnt);
  f.Gauge("exactly_librdkafka_queue_bytes",
          "librdkafka: bytes of the messages in the producer queues "
          "(msg_size)",
          label, s.msg_size);
  f.Gauge("exactly_librdkafka_reply_queue_ops",
          "librdkafka: operations waiting to be served (replyq)", label,
          s.replyq);
  f.Counter("exactly_librdkafka_tx_messages_total",
            "librdkafka: messages sent to brokers (txmsgs)", label, s.txmsgs);
  f.Counter("exactly_librdkafka_tx_message_bytes_total",
            "librdkafka: bytes of the messages sent to brokers "
            "(txmsg_bytes)",
            label, s.txmsg_bytes);
  f.Counter("exactly_librdkafka_rx_messages_total",
            "librdkafka: messages received from brokers (rxmsgs)", label,
            s.rxmsgs);
  for (const LibrdkafkaSummary::Broker& b : s.brokers) {
    std::vector<ClientMetric::Label> with_broker = label;
    with_broker.push_back({"broker", b.name});
    f.Gauge("exactly_librdkafka_broker_rtt_avg_seconds",
            "librdkafka: mean request round trip in the last interval "
            "(rtt.avg)",
            with_broker, b.rtt_avg);
    f.Gauge("exactly_librdkafka_broker_rtt_p99_seconds",
            "librdkafka: 99th percentile request round trip in the last "
            "interval (rtt.p99)",
            with_broker, b.rtt_p99);
    f.Gauge("exactly_librdkafka_broker_requests_in_flight",
            "librdkafka: requests awaiting a response (waitresp_cnt)",
            with_broker, b.waitresp_cnt);
  }
  for (const LibrdkafkaSummary::Partition& p : s.partitions) {
    std::vector<ClientMetric::Label> with_partition = label;
    with_partition.push_back({"topic", p.topic});
    with_partition.push_back({"partition", p.partition});
    if (p.hi_offset >= 0) {
      f.Gauge("exactly_librdkafka_partition_high_watermark",
              "librdkafka: the partition's high watermark (hi_offset)",
              with_partition, p.hi_offset);
    }
    if (p.consumer_lag >= 0) {
      f.Gauge("exactly_librdkafka_consumer_lag_messages",
              "librdkafka: the consumer's lag behind the high watermark "
              "(consumer_lag)",
              with_partition, p.consumer_lag);
    }
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

StatisticsCallback PrometheusCollector::StatisticsFor(std::string client) {
  return [weak = std::weak_ptr<State>(state_),
          client = std::move(client)](std::string_view json) {
    std::shared_ptr<State> state = weak.lock();
    if (state == nullptr) return;
    auto summary = Summarise(json);
    if (!summary.has_value()) return;
    std::lock_guard<std::mutex> lock(state->summaries_mu);
    state->summaries[{client, summary->first}] = std::move(summary->second);
  };
}

void PrometheusCollector::ForgetStatistics(const std::string& client) {
  std::lock_guard<std::mutex> lock(state_->summaries_mu);
  for (auto it = state_->summaries.begin(); it != state_->summaries.end();) {
    it =
        it->first.first == client ? state_->summaries.erase(it) : std::next(it);
  }
}

std::vector<prometheus::MetricFamily> PrometheusCollector::Collect() const {
  Families families;
  {
    std::lock_guard<std::mutex> lock(state_->summaries_mu);
    for (const auto& [key, summary] : state_->summaries) {
      AddLibrdkafka(families, key.first, key.second, summary);
    }
  }
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
