// The Prometheus exporter after real traffic against the test cluster: the
// text a scrape returns (prometheus-cpp's TextSerializer over the
// collector's families) holds the values of what the clients did.
#include "exactly/prometheus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "prometheus/text_serializer.h"
#include "spool_test_util.h"

namespace exactly::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The samples of one scrape, by series ("name{label=\"value\",...}" as
// written), with the text itself for messages.
struct Scrape {
  std::string text;
  std::map<std::string, double> samples;
  std::vector<std::pair<std::string, double>> in_order;

  // The sample's value; fails the test (and returns -1) if it is missing.
  double operator[](const std::string& series) const {
    auto it = samples.find(series);
    EXPECT_NE(it, samples.end()) << series << " not in the scrape:\n" << text;
    return it != samples.end() ? it->second : -1;
  }
  bool Has(const std::string& series) const {
    return samples.count(series) != 0;
  }
};

Scrape ScrapeText(const PrometheusCollector& collector) {
  Scrape scrape;
  scrape.text = prometheus::TextSerializer().Serialize(collector.Collect());
  std::istringstream lines(scrape.text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    // "series value" (the series' label values hold no spaces here).
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    double value = 0;
    const std::string number = line.substr(space + 1);
    if (number == "+Inf") {
      value = std::numeric_limits<double>::infinity();
    } else {
      EXPECT_TRUE(absl::SimpleAtod(number, &value)) << line;
    }
    EXPECT_TRUE(scrape.samples.emplace(line.substr(0, space), value).second)
        << "series twice: " << line;
    scrape.in_order.emplace_back(line.substr(0, space), value);
  }
  return scrape;
}

class PrometheusTest : public SpoolTest {
 protected:
  std::shared_ptr<PrometheusCollector> collector_ =
      std::make_shared<PrometheusCollector>();
};

TEST_F(PrometheusTest, ProducerRecordsDelivered) {
  const std::string topic = NewTopic("m-producer");
  auto producer = Producer::Create(ProducerOpts());
  ASSERT_TRUE(producer.ok()) << producer.status();
  auto registration = collector_->Register("orders", **producer);
  ASSERT_TRUE(registration.ok()) << registration.status();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "x"}).ok());
  }
  // Refused by Send (not queued): not sent.
  ASSERT_FALSE((*producer)->Send({.topic = "", .value = "x"}).ok());
  ASSERT_TRUE((*producer)->Flush(kPatience).ok());
  const Scrape s = ScrapeText(*collector_);
  EXPECT_EQ(s[R"(exactly_producer_sent_records_total{client="orders"})"], 100);
  EXPECT_EQ(s[R"(exactly_producer_delivered_records_total{client="orders"})"],
            100);
  EXPECT_EQ(s[R"(exactly_producer_failed_records_total{client="orders"})"], 0);
  EXPECT_EQ(s[R"(exactly_producer_queue_records{client="orders"})"], 0);
  EXPECT_THAT(s.text,
              HasSubstr("# TYPE exactly_producer_delivered_records_total "
                        "counter"));
  EXPECT_THAT(s.text, HasSubstr("# TYPE exactly_producer_queue_records gauge"));
}

TEST_F(PrometheusTest, TransactionsCommittedAbortedAndTheirLatency) {
  const std::string topic = NewTopic("m-txn");
  auto producer = TransactionalProducer::Create(
      TransactionalOpts(TestCluster::UniqueName("txn")));
  ASSERT_TRUE(producer.ok()) << producer.status();
  auto registration = collector_->Register("payments", **producer);
  ASSERT_TRUE(registration.ok()) << registration.status();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE((*producer)
                    ->Transact([&](Transaction& txn) {
                      for (int j = 0; j < 5; ++j) {
                        if (absl::Status s =
                                txn.Send({.topic = topic, .value = "c"});
                            !s.ok()) {
                          return s;
                        }
                      }
                      return absl::OkStatus();
                    })
                    .ok());
  }
  ASSERT_TRUE((*producer)->Begin().ok());
  ASSERT_TRUE((*producer)->Abort().ok());
  const Scrape s = ScrapeText(*collector_);
  const std::string c = R"({client="payments"})";
  auto aborted = [](const std::string& cause) {
    return R"(exactly_transactions_aborted_total{client="payments",cause=")" +
           cause + "\"}";
  };
  EXPECT_EQ(s["exactly_transactions_committed_total" + c], 2);
  EXPECT_EQ(s[aborted("requested")], 1);
  EXPECT_EQ(s[aborted("error")], 0);
  EXPECT_EQ(s[aborted("abortable_error")], 0);
  EXPECT_EQ(s[aborted("close")], 0);
  EXPECT_FALSE(s.Has("exactly_transactions_aborted_total" + c));
  EXPECT_EQ(s["exactly_transactional_producer_fenced" + c], 0);
  EXPECT_EQ(s["exactly_producer_sent_records_total" + c], 10);
  EXPECT_EQ(s["exactly_producer_delivered_records_total" + c], 10);
  // A histogram: one count per commit, the +Inf bucket holds them all and
  // the buckets are cumulative.
  EXPECT_EQ(s["exactly_transaction_commit_latency_seconds_count" + c], 2);
  EXPECT_GT(s["exactly_transaction_commit_latency_seconds_sum" + c], 0);
  EXPECT_EQ(
      s[R"(exactly_transaction_commit_latency_seconds_bucket{client="payments",le="+Inf"})"],
      2);
  double previous = 0;
  int buckets = 0;
  for (const auto& [series, value] : s.in_order) {
    if (!series.starts_with(
            "exactly_transaction_commit_latency_seconds_bucket")) {
      continue;
    }
    ++buckets;
    EXPECT_GE(value, previous) << series;
    previous = value;
  }
  EXPECT_EQ(buckets, static_cast<int>(kCommitLatencyBounds.size()) + 1);
  EXPECT_THAT(s.text,
              HasSubstr("# TYPE exactly_transaction_commit_latency_seconds "
                        "histogram"));
}

// Each abort counted under its cause; the causes add up to the total.
TEST_F(PrometheusTest, TransactionsAbortedByCause) {
  const std::string topic = NewTopic("m-abort");
  auto producer = TransactionalProducer::Create(
      TransactionalOpts(TestCluster::UniqueName("txn")));
  ASSERT_TRUE(producer.ok()) << producer.status();
  auto registration = collector_->Register("causes", **producer);
  ASSERT_TRUE(registration.ok()) << registration.status();
  // The function's own error: aborted (error) and returned.
  EXPECT_EQ((*producer)
                ->Transact([&](Transaction&) {
                  return absl::InvalidArgumentError("bad input");
                })
                .code(),
            absl::StatusCode::kInvalidArgument);
  // An abortable Kafka error, twice: aborted (abortable_error) and run
  // again; the third run commits its 5 records.
  int runs = 0;
  ASSERT_TRUE((*producer)
                  ->Transact([&](Transaction& txn) {
                    if (++runs <= 2) {
                      KafkaError e;
                      e.code = RD_KAFKA_RESP_ERR__STATE;
                      e.name = "_STATE";
                      e.txn_requires_abort = true;
                      return MakeKafkaStatus(e, "abortable");
                    }
                    for (int j = 0; j < 5; ++j) {
                      if (absl::Status s =
                              txn.Send({.topic = topic, .value = "a"});
                          !s.ok()) {
                        return s;
                      }
                    }
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(runs, 3);
  // Requested: Abort().
  ASSERT_TRUE((*producer)->Begin().ok());
  ASSERT_TRUE((*producer)->Abort().ok());
  auto aborted = [](const std::string& cause) {
    return R"(exactly_transactions_aborted_total{client="causes",cause=")" +
           cause + "\"}";
  };
  const std::string c = R"({client="causes"})";
  {
    const Scrape s = ScrapeText(*collector_);
    EXPECT_EQ(s[aborted("requested")], 1);
    EXPECT_EQ(s[aborted("error")], 1);
    EXPECT_EQ(s[aborted("abortable_error")], 2);
    EXPECT_EQ(s[aborted("close")], 0);
    EXPECT_EQ(s["exactly_transactions_committed_total" + c], 1);
    EXPECT_EQ(s["exactly_transaction_reruns_total" + c], 2);
    EXPECT_EQ(s["exactly_producer_sent_records_total" + c], 5);
    EXPECT_THAT(s.text,
                HasSubstr("# TYPE exactly_transactions_aborted_total counter"));
  }
  // Close with a transaction open: aborted (close).
  ASSERT_TRUE((*producer)->Begin().ok());
  ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "b"}).ok());
  ASSERT_TRUE((*producer)->Close().ok());
  const TransactionStats stats = (*producer)->stats();
  EXPECT_EQ(stats.aborted, 5u);
  EXPECT_EQ(stats.aborted_by_cause[static_cast<size_t>(AbortCause::kClose)],
            1u);
  const Scrape s = ScrapeText(*collector_);
  EXPECT_EQ(s[aborted("close")], 1);
  EXPECT_EQ(s[aborted("requested")] + s[aborted("error")] +
                s[aborted("abortable_error")] + s[aborted("close")],
            5);
}

TEST_F(PrometheusTest, SpoolDepthRisesAndReturnsToZeroOnceDrained) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("m-spool", 2);
  BlockDrainer();
  auto spool = SpooledProducer::Create(
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn")));
  ASSERT_TRUE(spool.ok()) << spool.status();
  auto registration = collector_->Register("ingest", **spool);
  ASSERT_TRUE(registration.ok()) << registration.status();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(i)}).ok());
  }
  // One at a time, each Send waiting for its own: 50 group commits of one
  // record. Then one SendBatch: a group commit of 10.
  // A Record refers to its bytes: keep the values alive past SendBatch.
  std::vector<std::string> values;
  for (int i = 50; i < 60; ++i) values.push_back(Value(i));
  std::vector<Record> batch;
  for (const std::string& v : values) {
    batch.push_back({.topic = topic, .value = v});
  }
  ASSERT_TRUE((*spool)->SendBatch(batch).ok());
  const std::string c = R"({client="ingest"})";
  {
    // The drainer cannot reach Kafka: all 60 are still spooled.
    const Scrape s = ScrapeText(*collector_);
    EXPECT_EQ(s["exactly_spool_depth_records" + c], 60);
    EXPECT_GT(s["exactly_spool_bytes" + c], 60 * 7);
    EXPECT_EQ(s["exactly_spool_appended_records_total" + c], 60);
    EXPECT_EQ(s["exactly_spool_committed_records_total" + c], 0);
    EXPECT_EQ(s["exactly_spool_group_commits_total" + c], 51);
    EXPECT_EQ(s["exactly_spool_quarantined_records" + c], 0);
    auto size_bucket = [](const std::string& le) {
      return R"(exactly_spool_group_commit_size_records_bucket{client="ingest",le=")" +
             le + "\"}";
    };
    EXPECT_EQ(s[size_bucket("1")], 50);
    EXPECT_EQ(s[size_bucket("8")], 50);
    EXPECT_EQ(s[size_bucket("16")], 51);
    EXPECT_EQ(s[size_bucket("+Inf")], 51);
    EXPECT_EQ(s["exactly_spool_group_commit_size_records_count" + c], 51);
    EXPECT_EQ(s["exactly_spool_group_commit_size_records_sum" + c], 60);
    EXPECT_EQ(s["exactly_spool_group_commit_latency_seconds_count" + c], 51);
    EXPECT_EQ(
        s[R"(exactly_spool_group_commit_latency_seconds_bucket{client="ingest",le="+Inf"})"],
        51);
    EXPECT_GT(s["exactly_spool_group_commit_latency_seconds_sum" + c], 0);
    EXPECT_THAT(
        s.text,
        HasSubstr(
            "# TYPE exactly_spool_group_commit_latency_seconds histogram"));
    const SpoolMetrics m = (*spool)->metrics();
    uint64_t latencies = 0;
    for (uint64_t n : m.group_commit_latency_counts) latencies += n;
    EXPECT_EQ(latencies, 51u);
    EXPECT_EQ(m.group_commit_size_counts[0], 50u);  // le 1
    EXPECT_EQ(m.group_commit_size_counts[4], 1u);   // le 16
  }
  UnblockDrainer();
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  const Scrape s = ScrapeText(*collector_);
  EXPECT_EQ(s["exactly_spool_depth_records" + c], 0);
  EXPECT_EQ(s["exactly_spool_bytes" + c], 0);
  EXPECT_EQ(s["exactly_spool_oldest_record_age_seconds" + c], 0);
  EXPECT_EQ(s["exactly_spool_appended_records_total" + c], 60);
  EXPECT_EQ(s["exactly_spool_committed_records_total" + c], 60);
  // Group commits are the Sends': the drainer's deletes are not counted.
  EXPECT_EQ(s["exactly_spool_group_commits_total" + c], 51);
  EXPECT_EQ(s["exactly_spool_group_commit_size_records_count" + c], 51);
  EXPECT_GE(s["exactly_spool_transactions_total" + c], 1);
  EXPECT_GE(s["exactly_spool_recoveries_total" + c], 1);
  EXPECT_GT(s["exactly_spool_max_commit_latency_seconds" + c], 0);
  EXPECT_EQ(s["exactly_spool_drainer_up" + c], 1);
  EXPECT_EQ(s["exactly_spool_committed_sequence" + c],
            s["exactly_spool_next_sequence" + c] - 1);
  registration->Reset();
  EXPECT_THAT(ScrapeText(*collector_).text, Not(HasSubstr("ingest")));
}

TEST_F(PrometheusTest, ProcessorCountsAndCommittedOffsetsPerPartition) {
  const std::string input = NewTopic("m-proc-in", 2);
  const std::string output = NewTopic("m-proc-out", 2);
  std::vector<std::pair<std::string, std::string>> kvs;
  for (int i = 0; i < 40; ++i) kvs.emplace_back("k" + std::to_string(i), "v");
  Produce(input, kvs);
  ProcessorOptions o;
  o.bootstrap_servers = bootstrap();
  o.group_id = TestCluster::UniqueName("m-group");
  o.input_topics = {input};
  o.transactional_id = TestCluster::UniqueName("txn");
  o.max_batch_records = 10;
  o.max_batch_time = std::chrono::milliseconds(50);
  o.consumer_properties["session.timeout.ms"] = "6000";
  o.consumer_properties["heartbeat.interval.ms"] = "500";
  o.producer_properties["transaction.timeout.ms"] = "10000";
  auto p = Processor::Create(o, [&](const Message& in, Emitter& out) {
    return out.Send({.topic = output, .key = in.key(), .value = in.value()});
  });
  ASSERT_TRUE(p.ok()) << p.status();
  auto registration = collector_->Register("copier", **p);
  ASSERT_TRUE(registration.ok()) << registration.status();
  absl::Status status;
  std::thread runner([&] { status = (*p)->Run(); });
  // Scrapes while it runs (the collector reads the stats from this thread).
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while ((*p)->stats().records_in < 40 &&
         std::chrono::steady_clock::now() < deadline) {
    ScrapeText(*collector_);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  (*p)->Stop();
  runner.join();
  ASSERT_TRUE(status.ok()) << status;
  const ProcessorStats stats = (*p)->stats();
  const Scrape s = ScrapeText(*collector_);
  const std::string c = R"({client="copier"})";
  EXPECT_EQ(s["exactly_processor_input_records_total" + c], 40);
  EXPECT_EQ(s["exactly_processor_output_records_total" + c], 40);
  EXPECT_EQ(s["exactly_processor_transactions_committed_total" + c],
            static_cast<double>(stats.transactions_committed));
  EXPECT_GE(s["exactly_processor_transactions_committed_total" + c], 4);
  // Offsets start at 0: the committed (next) offsets add up to the inputs.
  double offsets = 0;
  for (int partition = 0; partition < 2; ++partition) {
    const std::string series =
        "exactly_processor_committed_offset{client=\"copier\",topic=\"" +
        input + "\",partition=\"" + std::to_string(partition) + "\"}";
    if (s.Has(series)) offsets += s[series];
  }
  EXPECT_EQ(offsets, 40) << s.text;
  // Batches of at most 10 records, one per committed transaction.
  EXPECT_EQ(s["exactly_processor_batch_size_records_count" + c],
            static_cast<double>(stats.transactions_committed));
  EXPECT_EQ(s["exactly_processor_batch_size_records_sum" + c], 40);
  EXPECT_EQ(
      s[R"(exactly_processor_batch_size_records_bucket{client="copier",le="10"})"],
      static_cast<double>(stats.transactions_committed));
  EXPECT_EQ(
      s[R"(exactly_processor_batch_size_records_bucket{client="copier",le="20"})"],
      static_cast<double>(stats.transactions_committed));
  uint64_t batches = 0;
  for (uint64_t n : stats.batch_size_counts) batches += n;
  EXPECT_EQ(batches, stats.transactions_committed);
  // Nothing aborted, for any cause.
  for (const char* cause : {"error", "abortable_error", "revoked", "close"}) {
    EXPECT_EQ(s[std::string("exactly_processor_transactions_aborted_total{"
                            "client=\"copier\",cause=\"") +
                cause + "\"}"],
              0)
        << cause;
  }
  // One member alone in the group: assigned once, nothing revoked yet.
  EXPECT_EQ(s["exactly_processor_partitions_assigned_total" + c], 1);
  EXPECT_EQ(s["exactly_processor_partitions_revoked_total" + c], 0);
  registration->Reset();
  ASSERT_TRUE((*p)->Close().ok());
  // Leaving the group revoked its partitions.
  EXPECT_EQ((*p)->stats().partitions_revoked, 1u);
  EXPECT_EQ((*p)->stats().transactions_aborted, 0u);
}

// Aborts by cause in the processor: a transform's abortable error aborts
// the batch (abortable_error), which is transformed again and committed; a
// transform's own error aborts it (error) and stops processing.
TEST_F(PrometheusTest, ProcessorAbortsByCause) {
  const std::string input = NewTopic("m-pabort-in", 1);
  const std::string output = NewTopic("m-pabort-out", 1);
  std::vector<std::pair<std::string, std::string>> kvs;
  for (int i = 0; i < 5; ++i) kvs.emplace_back("k" + std::to_string(i), "v");
  kvs.emplace_back("bad", "v");
  Produce(input, kvs);
  ProcessorOptions o;
  o.bootstrap_servers = bootstrap();
  o.group_id = TestCluster::UniqueName("m-group");
  o.input_topics = {input};
  o.transactional_id = TestCluster::UniqueName("txn");
  o.max_batch_records = 5;
  o.max_batch_time = std::chrono::milliseconds(2000);
  o.consumer_properties["session.timeout.ms"] = "6000";
  o.consumer_properties["heartbeat.interval.ms"] = "500";
  o.producer_properties["transaction.timeout.ms"] = "10000";
  int abortable_left = 1;
  auto p = Processor::Create(o, [&](const Message& in, Emitter& out) {
    if (in.key() == "k2" && abortable_left > 0) {
      --abortable_left;
      KafkaError e;
      e.code = RD_KAFKA_RESP_ERR__STATE;
      e.name = "_STATE";
      e.txn_requires_abort = true;
      return MakeKafkaStatus(e, "abortable");
    }
    if (in.key() == "bad") return absl::InvalidArgumentError("bad record");
    return out.Send({.topic = output, .key = in.key(), .value = in.value()});
  });
  ASSERT_TRUE(p.ok()) << p.status();
  auto registration = collector_->Register("causes", **p);
  ASSERT_TRUE(registration.ok()) << registration.status();
  const absl::Status status = (*p)->Run();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const Scrape s = ScrapeText(*collector_);
  auto aborted = [](const std::string& cause) {
    return R"(exactly_processor_transactions_aborted_total{client="causes",cause=")" +
           cause + "\"}";
  };
  const std::string c = R"({client="causes"})";
  EXPECT_EQ(s["exactly_processor_input_records_total" + c], 5);
  EXPECT_EQ(s["exactly_processor_transactions_committed_total" + c], 1);
  EXPECT_EQ(s["exactly_processor_batches_replayed_total" + c], 1);
  EXPECT_EQ(s[aborted("abortable_error")], 1);
  EXPECT_EQ(s[aborted("error")], 1);
  EXPECT_EQ(s[aborted("revoked")], 0);
  EXPECT_EQ(s[aborted("close")], 0);
  EXPECT_EQ(
      s[R"(exactly_processor_batch_size_records_bucket{client="causes",le="5"})"],
      1);
  EXPECT_EQ(
      s[R"(exactly_processor_batch_size_records_bucket{client="causes",le="2"})"],
      0);
  EXPECT_EQ(s["exactly_processor_batch_size_records_sum" + c], 5);
  const ProcessorStats stats = (*p)->stats();
  EXPECT_EQ(stats.transactions_aborted, 2u);
  registration->Reset();
  ASSERT_TRUE((*p)->Close().ok());
}

// librdkafka's statistics, passed through on_statistics: a report after the
// 100 records were sent says so, with the broker's round trips.
TEST_F(PrometheusTest, LibrdkafkaStatisticsOfAProducer) {
  const std::string topic = NewTopic("m-rdstats", 1);
  ProducerOptions o = ProducerOpts();
  o.properties["statistics.interval.ms"] = "100";
  o.on_statistics = collector_->StatisticsFor("stats");
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "x"}).ok());
  }
  ASSERT_TRUE((*producer)->Flush(kPatience).ok());
  const std::string c = R"({client="stats",type="producer"})";
  const std::string sent = "exactly_librdkafka_tx_messages_total" + c;
  const std::string queued = "exactly_librdkafka_queue_messages" + c;
  // Reports come every 100 ms: wait for one made after the deliveries.
  Scrape s;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  do {
    s = ScrapeText(*collector_);
    if (s.Has(sent) && s.Has(queued) && s.samples.at(sent) == 100 &&
        s.samples.at(queued) == 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(s[sent], 100);
  EXPECT_EQ(s[queued], 0);
  EXPECT_GT(s["exactly_librdkafka_tx_message_bytes_total" + c], 0);
  EXPECT_THAT(s.text, HasSubstr("exactly_librdkafka_broker_rtt_avg_seconds{"
                                "client=\"stats\",type=\"producer\",broker="));
  // Once the producer is gone no report comes: forgotten, it stays gone.
  producer->reset();
  collector_->ForgetStatistics("stats");
  EXPECT_THAT(ScrapeText(*collector_).text, Not(HasSubstr("stats")));
}

// A consumer's lag per partition, from librdkafka's statistics: 0 once it
// has read and committed everything; the high watermarks add up to what was
// written.
TEST_F(PrometheusTest, LibrdkafkaStatisticsOfAConsumer) {
  const std::string topic = NewTopic("m-lag", 2);
  std::vector<std::pair<std::string, std::string>> kvs;
  for (int i = 0; i < 100; ++i) kvs.emplace_back("k" + std::to_string(i), "v");
  Produce(topic, kvs);
  ConsumerOptions o = ConsumerOpts(TestCluster::UniqueName("m-lag"));
  o.properties["statistics.interval.ms"] = "100";
  o.on_statistics = collector_->StatisticsFor("reader");
  auto consumer = Consumer::Create(o);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->Subscribe({topic}).ok());
  size_t read = 0;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (read < 100 && std::chrono::steady_clock::now() < deadline) {
    auto batch = (*consumer)->PollBatch(100, std::chrono::milliseconds(100));
    ASSERT_TRUE(batch.ok()) << batch.status();
    read += batch->size();
  }
  ASSERT_EQ(read, 100u);
  ASSERT_TRUE((*consumer)->Commit().ok());
  auto series = [&](const std::string& name, int partition) {
    return name + R"({client="reader",type="consumer",topic=")" + topic +
           R"(",partition=")" + std::to_string(partition) + "\"}";
  };
  // Reports are served inside polls: poll until one after the commit came.
  Scrape s;
  auto settled = [&] {
    double watermarks = 0;
    for (int p = 0; p < 2; ++p) {
      const std::string lag =
          series("exactly_librdkafka_consumer_lag_messages", p);
      const std::string hw =
          series("exactly_librdkafka_partition_high_watermark", p);
      if (!s.Has(lag) || !s.Has(hw) || s.samples.at(lag) != 0) return false;
      watermarks += s.samples.at(hw);
    }
    return watermarks == 100;
  };
  do {
    auto m = (*consumer)->Poll(std::chrono::milliseconds(50));
    ASSERT_TRUE(m.ok()) << m.status();
    s = ScrapeText(*collector_);
  } while (!settled() && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(s[series("exactly_librdkafka_consumer_lag_messages", 0)], 0);
  EXPECT_EQ(s[series("exactly_librdkafka_consumer_lag_messages", 1)], 0);
  EXPECT_EQ(s[series("exactly_librdkafka_partition_high_watermark", 0)] +
                s[series("exactly_librdkafka_partition_high_watermark", 1)],
            100);
  EXPECT_GE(
      s[R"(exactly_librdkafka_rx_messages_total{client="reader",type="consumer"})"],
      100);
}

TEST_F(PrometheusTest, RegistrationsNameClientsOnceAndEndWithTheirHandle) {
  auto a = Producer::Create(ProducerOpts());
  auto b = Producer::Create(ProducerOpts());
  ASSERT_TRUE(a.ok() && b.ok());
  auto first = collector_->Register("same", **a);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(collector_->Register("same", **b).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(collector_->Register("", **b).status().code(),
            absl::StatusCode::kInvalidArgument);
  {
    auto other = collector_->Register("other", **b);
    ASSERT_TRUE(other.ok()) << other.status();
    const Scrape s = ScrapeText(*collector_);
    EXPECT_TRUE(s.Has(R"(exactly_producer_queue_records{client="same"})"));
    EXPECT_TRUE(s.Has(R"(exactly_producer_queue_records{client="other"})"));
  }
  // "other" ended with its handle; a moved-from handle unregisters nothing.
  PrometheusCollector::Registration moved = std::move(*first);
  first->Reset();
  const Scrape s = ScrapeText(*collector_);
  EXPECT_TRUE(s.Has(R"(exactly_producer_queue_records{client="same"})"));
  EXPECT_FALSE(s.Has(R"(exactly_producer_queue_records{client="other"})"));
  // A handle may outlive its collector.
  collector_.reset();
  moved.Reset();
}

}  // namespace
}  // namespace exactly::testing
