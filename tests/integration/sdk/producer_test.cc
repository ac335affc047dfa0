// The idempotent producer against a cluster: delivery reports without
// polling, futures, flush, the queue-full policy, callback exceptions, close.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sdk_test_util.h"

namespace exactly::testing {
namespace {

using ::testing::HasSubstr;

class ProducerTest : public SdkTest {};

TEST_F(ProducerTest, CallbackRunsOnceForEachRecord) {
  const std::string topic = NewTopic("p-cb");
  auto producer = Producer::Create(ProducerOpts());
  ASSERT_TRUE(producer.ok()) << producer.status();
  constexpr int kRecords = 100;
  std::mutex mu;
  std::vector<int> seen(kRecords, 0);
  std::vector<int64_t> offsets;
  for (int i = 0; i < kRecords; ++i) {
    const std::string key = std::to_string(i);
    ASSERT_TRUE((*producer)
                    ->Send({.topic = topic, .key = key, .value = "v" + key},
                           [&, i](const DeliveryReport& r) {
                             std::lock_guard<std::mutex> lock(mu);
                             EXPECT_TRUE(r.status.ok()) << r.status;
                             EXPECT_EQ(r.topic, topic);
                             EXPECT_EQ(r.key, std::to_string(i));
                             EXPECT_EQ(r.value, "v" + std::to_string(i));
                             EXPECT_GE(r.offset, 0);
                             ++seen[i];
                           })
                    .ok());
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());
  for (int i = 0; i < kRecords; ++i) EXPECT_EQ(seen[i], 1) << i;
  EXPECT_EQ((*producer)->stats().delivered, kRecords);
  EXPECT_EQ((*producer)->stats().failed, 0u);
  EXPECT_EQ((*producer)->stats().in_flight, 0u);
  EXPECT_EQ(ReadCommitted(topic, 3).size(), kRecords);
}

TEST_F(ProducerTest, ReportsArriveWithoutPollingOrFlushing) {
  const std::string topic = NewTopic("p-nopoll");
  std::mutex mu;
  std::condition_variable cv;
  int delivered = 0;
  ProducerOptions o = ProducerOpts();
  o.on_delivery = [&](const DeliveryReport& r) {
    EXPECT_TRUE(r.status.ok()) << r.status;
    std::lock_guard<std::mutex> lock(mu);
    ++delivered;
    cv.notify_all();
  };
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "x"}).ok());
  }
  // No Flush, no poll: the SDK's thread delivers the reports.
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, kPatience, [&] { return delivered == 10; }));
}

// Finished reports are handed back for the sending thread to free; when that
// thread goes quiet, the delivery thread must free them itself, or they would
// stay counted in librdkafka's queue forever.
TEST_F(ProducerTest, RecordsLeaveTheQueueWhenTheSenderGoesQuiet) {
  const std::string topic = NewTopic("p-quiet");
  auto producer = Producer::Create(ProducerOpts());
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "x"}).ok());
  }
  // No Flush and no further Send.
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while ((*producer)->stats().in_flight != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ((*producer)->stats().in_flight, 0u);
  EXPECT_EQ((*producer)->stats().delivered, 1000u);
}

TEST_F(ProducerTest, FutureHoldsWhereTheRecordLanded) {
  const std::string topic = NewTopic("p-future", 1);
  auto producer = Producer::Create(ProducerOpts());
  ASSERT_TRUE(producer.ok()) << producer.status();
  auto first = (*producer)->SendWithFuture({.topic = topic, .value = "a"});
  auto second = (*producer)->SendWithFuture({.topic = topic, .value = "b"});
  absl::StatusOr<RecordMetadata> a = first.get();
  absl::StatusOr<RecordMetadata> b = second.get();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->topic, topic);
  EXPECT_EQ(a->partition, 0);
  EXPECT_EQ(a->offset, 0);
  EXPECT_EQ(b->offset, 1);
}

TEST_F(ProducerTest, FutureHoldsAnEnqueueFailure) {
  auto producer = Producer::Create(ProducerOpts());
  ASSERT_TRUE(producer.ok()) << producer.status();
  auto result = (*producer)->SendWithFuture({.topic = "", .value = "a"}).get();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ProducerTest, NullKeyValueAndHeadersRoundTrip) {
  const std::string topic = NewTopic("p-headers", 1);
  auto producer = Producer::Create(ProducerOpts());
  ASSERT_TRUE(producer.ok()) << producer.status();
  const Header headers[] = {{"trace", "abc"}, {"empty", ""}, {"null", {}}};
  ASSERT_TRUE((*producer)->Send({.topic = topic, .headers = headers}).ok());
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());

  auto consumer = Consumer::Create(ConsumerOpts(TestCluster::UniqueName("g")));
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->Subscribe({topic}).ok());
  std::optional<Message> m;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!m.has_value() && std::chrono::steady_clock::now() < deadline) {
    auto polled = (*consumer)->Poll(std::chrono::milliseconds(200));
    ASSERT_TRUE(polled.ok()) << polled.status();
    m = std::move(*polled);
  }
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->has_key());
  EXPECT_FALSE(m->has_value());  // a tombstone
  EXPECT_EQ(m->header("trace"), "abc");
  EXPECT_EQ(m->header("empty"), "");
  ASSERT_EQ(m->headers().size(), 3u);
  EXPECT_EQ(m->headers()[2].value.data(), nullptr);
  EXPECT_FALSE(m->header("absent").has_value());
}

TEST_F(ProducerTest, FlushReturnsFailuresOfRecordsWithoutAHandler) {
  SKIP_WITHOUT_FAULT_INJECTION();
  const std::string topic = NewTopic("p-fail", 1);
  auto producer = Producer::Create(ProducerOpts());
  ASSERT_TRUE(producer.ok()) << producer.status();
  ASSERT_TRUE(cluster_
                  ->InjectErrors(api::kProduce,
                                 {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED})
                  .ok());
  ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "lost?"}).ok());
  absl::Status s = (*producer)->Flush(std::chrono::seconds(30));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(KafkaErrorName(s), "TOPIC_AUTHORIZATION_FAILED") << s;
  EXPECT_THAT(s.message(), HasSubstr("1 record(s)"));
  EXPECT_EQ((*producer)->stats().failed, 1u);
  // Reported once: the next Flush has nothing to say.
  EXPECT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());
}

TEST_F(ProducerTest, QueueFullFailsAtOnceWhenConfigured) {
  const std::string topic = NewTopic("p-qfull", 1);
  ProducerOptions o = ProducerOpts();
  o.queue_full = QueueFullPolicy::kFail;
  o.properties["queue.buffering.max.messages"] = "1";
  o.properties["linger.ms"] = "60000";  // keep the first record queued
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "1"}).ok());
  absl::Status s = (*producer)->Send({.topic = topic, .value = "2"});
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_EQ(KafkaErrorName(s), "_QUEUE_FULL");
  EXPECT_TRUE(IsRetriable(s));
  EXPECT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());
  EXPECT_EQ((*producer)->stats().delivered, 1u);
}

TEST_F(ProducerTest, QueueFullBlocksUntilThereIsRoom) {
  const std::string topic = NewTopic("p-qblock", 1);
  ProducerOptions o = ProducerOpts();
  o.queue_full = QueueFullPolicy::kBlock;
  o.properties["queue.buffering.max.messages"] = "1";
  o.properties["linger.ms"] = "0";
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  constexpr int kRecords = 200;
  for (int i = 0; i < kRecords; ++i) {
    absl::Status s =
        (*producer)->Send({.topic = topic, .value = std::to_string(i)});
    ASSERT_TRUE(s.ok()) << i << ": " << s;
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());
  EXPECT_EQ((*producer)->stats().delivered, kRecords);
  std::vector<ReadRecord> read = ReadCommitted(topic, 1);
  ASSERT_EQ(read.size(), kRecords);
  for (int i = 0; i < kRecords; ++i)
    EXPECT_EQ(read[i].value, std::to_string(i));
}

TEST_F(ProducerTest, QueueFullBlockGivesUpAtItsTimeout) {
  const std::string topic = NewTopic("p-qtimeout", 1);
  ProducerOptions o = ProducerOpts();
  o.queue_full = QueueFullPolicy::kBlock;
  o.queue_full_timeout = std::chrono::milliseconds(100);
  o.properties["queue.buffering.max.messages"] = "1";
  o.properties["linger.ms"] = "60000";
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "1"}).ok());
  absl::Status s = (*producer)->Send({.topic = topic, .value = "2"});
  EXPECT_EQ(KafkaErrorName(s), "_QUEUE_FULL") << s;
}

TEST_F(ProducerTest, CallbackExceptionIsReportedAndTheProducerGoesOn) {
  const std::string topic = NewTopic("p-throw");
  std::mutex mu;
  std::vector<absl::Status> errors;
  ProducerOptions o = ProducerOpts();
  o.on_error = [&](const absl::Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(s);
  };
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  std::atomic<int> calls{0};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*producer)
                    ->Send({.topic = topic, .value = "x"},
                           [&](const DeliveryReport&) {
                             if (calls++ == 0) {
                               throw std::runtime_error("callback bug");
                             }
                           })
                    .ok());
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ((*producer)->stats().callback_errors, 1u);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message(), HasSubstr("callback bug"));
}

// librdkafka's statistics reach on_statistics (on the delivery thread), and
// an exception it throws goes to on_error.
TEST_F(ProducerTest, StatisticsReachOnStatistics) {
  const std::string topic = NewTopic("p-stats", 1);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> reports;
  std::vector<absl::Status> errors;
  ProducerOptions o = ProducerOpts();
  o.properties["statistics.interval.ms"] = "100";
  o.on_statistics = [&](std::string_view json) {
    std::lock_guard<std::mutex> lock(mu);
    reports.emplace_back(json);
    cv.notify_all();
    if (reports.size() == 2) throw std::runtime_error("statistics thrown");
  };
  o.on_error = [&](const absl::Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(s);
    cv.notify_all();
  };
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  ASSERT_TRUE((*producer)->Send({.topic = topic, .value = "x"}).ok());
  ASSERT_TRUE((*producer)->Flush(kPatience).ok());
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, kPatience, [&] { return !errors.empty(); }));
  EXPECT_THAT(reports[0], HasSubstr("\"type\": \"producer\""));
  EXPECT_THAT(reports[0], HasSubstr("\"txmsgs\""));
  EXPECT_THAT(errors[0].message(), HasSubstr("statistics thrown"));
}

TEST_F(ProducerTest, CloseRunsEveryCallbackAndRefusesLaterSends) {
  const std::string topic = NewTopic("p-close");
  ProducerOptions o = ProducerOpts();
  o.properties["linger.ms"] = "60000";
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  std::atomic<int> calls{0};
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE((*producer)
                    ->Send({.topic = topic, .value = "x"},
                           [&](const DeliveryReport& r) {
                             // Delivered, or failed by the close: never lost
                             // without a word.
                             EXPECT_TRUE(r.status.ok() ||
                                         r.status.code() ==
                                             absl::StatusCode::kCancelled)
                                 << r.status;
                             ++calls;
                           })
                    .ok());
  }
  absl::Status closed = (*producer)->Close(std::chrono::milliseconds(0));
  EXPECT_TRUE(closed.ok() ||
              closed.code() == absl::StatusCode::kDeadlineExceeded)
      << closed;
  EXPECT_EQ(calls.load(), 20);
  EXPECT_EQ((*producer)->Send({.topic = topic, .value = "late"}).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE((*producer)->Close().ok());
}

}  // namespace
}  // namespace exactly::testing
