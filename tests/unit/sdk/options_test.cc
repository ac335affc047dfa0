// Options: safe defaults, pass-through of librdkafka properties, and every
// unsafe combination refused with the property named.
#include "exactly/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "exactly/consumer.h"
#include "exactly/processor.h"
#include "exactly/producer.h"
#include "exactly/transactional_producer.h"

namespace exactly {
namespace {

using ::testing::HasSubstr;

// Nothing listens here: these tests never get as far as connecting.
constexpr char kBootstrap[] = "127.0.0.1:1";

ProducerOptions Producer(std::map<std::string, std::string> properties = {}) {
  ProducerOptions o;
  o.bootstrap_servers = kBootstrap;
  o.properties = std::move(properties);
  return o;
}

ConsumerOptions Consumer(std::map<std::string, std::string> properties = {}) {
  ConsumerOptions o;
  o.bootstrap_servers = kBootstrap;
  o.group_id = "g";
  o.properties = std::move(properties);
  return o;
}

ProcessorOptions Processor() {
  ProcessorOptions o;
  o.bootstrap_servers = kBootstrap;
  o.group_id = "g";
  o.input_topics = {"in"};
  o.transactional_id = "t";
  return o;
}

TEST(ProducerOptionsTest, DefaultsAreSafe) {
  auto p = LibrdkafkaProperties(Producer());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("acks"), "all");
  EXPECT_EQ(p->at("enable.idempotence"), "true");
  EXPECT_EQ(p->at("max.in.flight.requests.per.connection"), "5");
  EXPECT_EQ(p->at("bootstrap.servers"), kBootstrap);
}

// Issue 23: librdkafka's reconnect back-off grows to 10 s when connections die
// young; the SDK caps it at 200 ms (bench/fault_recovery_bench).
TEST(ProducerOptionsTest, DefaultsRecoverQuicklyFromDroppedConnections) {
  auto p = LibrdkafkaProperties(Producer());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("reconnect.backoff.ms"), "50");
  EXPECT_EQ(p->at("reconnect.backoff.max.ms"), "200");
}

TEST(ProducerOptionsTest, ExplicitReconnectBackoffWins) {
  auto p =
      LibrdkafkaProperties(Producer({{"reconnect.backoff.ms", "100"},
                                     {"reconnect.backoff.max.ms", "10000"}}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("reconnect.backoff.ms"), "100");
  EXPECT_EQ(p->at("reconnect.backoff.max.ms"), "10000");
}

// Issue 23: a produce response lost on a connection that stays open costs a
// librdkafka client socket.timeout.ms (60 s); the SDK's producers use 10 s.
TEST(ProducerOptionsTest, DefaultsTimeRequestsOutInSeconds) {
  auto p = LibrdkafkaProperties(Producer());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("socket.timeout.ms"), "10000");
  EXPECT_EQ(p->count("request.timeout.ms"), 0u);

  auto mine = LibrdkafkaProperties(Producer({{"socket.timeout.ms", "60000"}}));
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->at("socket.timeout.ms"), "60000");
}

// librdkafka refuses socket.timeout.ms > transaction.timeout.ms + 100, and
// below 10 s picks transaction.timeout.ms - 100 itself.
TEST(ProducerOptionsTest, ShortTransactionTimeoutKeepsLibrdkafkasOwn) {
  auto p = LibrdkafkaProperties(Producer({{"transaction.timeout.ms", "5000"}}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->count("socket.timeout.ms"), 0u);
  auto at_limit =
      LibrdkafkaProperties(Producer({{"transaction.timeout.ms", "9900"}}));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(at_limit->at("socket.timeout.ms"), "10000");
}

TEST(ProducerOptionsTest, PropertiesPassThroughByTheirUsualName) {
  auto p = LibrdkafkaProperties(
      Producer({{"linger.ms", "5"}, {"compression.type", "zstd"}}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("linger.ms"), "5");
  EXPECT_EQ(p->at("compression.type"), "zstd");
}

TEST(ProducerOptionsTest, SafeValuesAreAccepted) {
  EXPECT_TRUE(Validate(Producer({{"acks", "-1"},
                                 {"enable.idempotence", "true"},
                                 {"max.in.flight", "3"},
                                 {"retries", "100"}}))
                  .ok());
  EXPECT_TRUE(Validate(Producer({{"acks", "ALL"}})).ok());
}

struct UnsafeProperty {
  std::string property;  // as the user writes it
  std::string value;
  std::string named;  // the name the error must mention
};

// Readable test names in CTest ("acks=1"), not the struct's bytes.
void PrintTo(const UnsafeProperty& u, std::ostream* os) {
  *os << u.property << "=" << u.value;
}

class UnsafeProducerPropertyTest
    : public ::testing::TestWithParam<UnsafeProperty> {};

TEST_P(UnsafeProducerPropertyTest, RefusedInExactlyOnceMode) {
  const UnsafeProperty& u = GetParam();
  absl::Status s = Validate(Producer({{u.property, u.value}}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(u.named + "=" + u.value));
  EXPECT_THAT(s.message(), HasSubstr("unsafe in exactly-once mode"));
}

TEST_P(UnsafeProducerPropertyTest, RefusedWithATransactionalIdEvenUnchecked) {
  const UnsafeProperty& u = GetParam();
  ProducerOptions o = Producer({{u.property, u.value}});
  o.transactional_id = "orders-writer-1";
  o.mode = Mode::kUnchecked;  // transactions are exactly-once regardless
  absl::Status s = Validate(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(u.named + "=" + u.value));
  EXPECT_THAT(s.message(),
              HasSubstr("with transactional.id \"orders-writer-1\""));
}

TEST_P(UnsafeProducerPropertyTest, AllowedInUncheckedModeWithoutTransactions) {
  const UnsafeProperty& u = GetParam();
  ProducerOptions o = Producer({{u.property, u.value}});
  o.mode = Mode::kUnchecked;
  auto p = LibrdkafkaProperties(o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at(u.named), u.value);
}

TEST_P(UnsafeProducerPropertyTest, CreateRefusesIt) {
  const UnsafeProperty& u = GetParam();
  auto producer = exactly::Producer::Create(Producer({{u.property, u.value}}));
  EXPECT_EQ(producer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(producer.status().message(), HasSubstr(u.named));
}

INSTANTIATE_TEST_SUITE_P(
    All, UnsafeProducerPropertyTest,
    ::testing::Values(
        UnsafeProperty{"acks", "1", "acks"},
        UnsafeProperty{"acks", "0", "acks"},
        UnsafeProperty{"request.required.acks", "1", "acks"},
        UnsafeProperty{"enable.idempotence", "false", "enable.idempotence"},
        UnsafeProperty{"max.in.flight.requests.per.connection", "6",
                       "max.in.flight.requests.per.connection"},
        UnsafeProperty{"max.in.flight", "100",
                       "max.in.flight.requests.per.connection"},
        UnsafeProperty{"retries", "0", "retries"},
        UnsafeProperty{"message.send.max.retries", "0", "retries"},
        UnsafeProperty{"queuing.strategy", "lifo", "queuing.strategy"}));

TEST(ProducerOptionsTest, AcksOneWithTransactionalIdSaysWhy) {
  ProducerOptions o = Producer({{"acks", "1"}});
  o.transactional_id = "orders-writer-1";
  auto producer = TransactionalProducer::Create(o);
  ASSERT_FALSE(producer.ok());
  EXPECT_EQ(producer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(producer.status().message(),
              HasSubstr("acks=1 is unsafe with transactional.id "
                        "\"orders-writer-1\""));
  EXPECT_THAT(producer.status().message(), HasSubstr("acks=all"));
}

TEST(ProducerOptionsTest, BootstrapServersIsRequired) {
  ProducerOptions o;
  absl::Status s = Validate(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("bootstrap.servers"));
}

TEST(ProducerOptionsTest, BootstrapServersViaPropertiesOnly) {
  ProducerOptions o;
  o.properties["metadata.broker.list"] = kBootstrap;
  auto p = LibrdkafkaProperties(o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("bootstrap.servers"), kBootstrap);
}

TEST(ProducerOptionsTest, FieldAndPropertyDisagreeing) {
  ProducerOptions o = Producer({{"bootstrap.servers", "elsewhere:9092"}});
  absl::Status s = Validate(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("bootstrap.servers is set twice"));
}

TEST(ProducerOptionsTest, AliasesDisagreeing) {
  absl::Status s =
      Validate(Producer({{"acks", "all"}, {"request.required.acks", "1"}}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("acks is set twice"));
}

TEST(ProducerOptionsTest, UnknownPropertyIsNamedByCreate) {
  auto producer =
      exactly::Producer::Create(Producer({{"no.such.property", "1"}}));
  EXPECT_EQ(producer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(producer.status().message(), HasSubstr("no.such.property"));
}

TEST(ProducerOptionsTest, ProducerRefusesATransactionalId) {
  ProducerOptions o = Producer();
  o.transactional_id = "t";
  auto producer = exactly::Producer::Create(o);
  EXPECT_EQ(producer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(producer.status().message(), HasSubstr("TransactionalProducer"));
}

TEST(ProducerOptionsTest, TransactionalProducerNeedsATransactionalId) {
  auto producer = TransactionalProducer::Create(Producer());
  EXPECT_EQ(producer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(producer.status().message(), HasSubstr("transactional.id"));
}

TEST(ProducerOptionsTest, LibrdkafkasOwnChecksStillApply) {
  // message.timeout.ms above transaction.timeout.ms: librdkafka refuses it
  // and names both.
  ProducerOptions o = Producer(
      {{"transaction.timeout.ms", "10000"}, {"message.timeout.ms", "20000"}});
  o.transactional_id = "t";
  auto producer = TransactionalProducer::Create(o);
  EXPECT_EQ(producer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(producer.status().message(), HasSubstr("message.timeout.ms"));
}

TEST(ConsumerOptionsTest, DefaultsAreSafe) {
  auto p = LibrdkafkaProperties(Consumer());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("isolation.level"), "read_committed");
  EXPECT_EQ(p->at("enable.auto.commit"), "false");
  EXPECT_EQ(p->at("auto.offset.reset"), "earliest");
  EXPECT_EQ(p->at("group.id"), "g");
}

TEST(ConsumerOptionsTest, DefaultsRecoverQuicklyFromDroppedConnections) {
  auto p = LibrdkafkaProperties(Consumer());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->at("reconnect.backoff.ms"), "50");
  EXPECT_EQ(p->at("reconnect.backoff.max.ms"), "200");
  auto mine =
      LibrdkafkaProperties(Consumer({{"reconnect.backoff.max.ms", "5000"}}));
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->at("reconnect.backoff.max.ms"), "5000");
  EXPECT_EQ(mine->at("reconnect.backoff.ms"), "50");
}

TEST(ConsumerOptionsTest, GroupIdIsRequired) {
  ConsumerOptions o = Consumer();
  o.group_id.clear();
  absl::Status s = Validate(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("group.id"));
}

class UnsafeConsumerPropertyTest
    : public ::testing::TestWithParam<UnsafeProperty> {};

TEST_P(UnsafeConsumerPropertyTest, RefusedInExactlyOnceMode) {
  const UnsafeProperty& u = GetParam();
  absl::Status s = Validate(Consumer({{u.property, u.value}}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(u.named + "=" + u.value));
}

TEST_P(UnsafeConsumerPropertyTest, CreateRefusesIt) {
  const UnsafeProperty& u = GetParam();
  auto consumer = exactly::Consumer::Create(Consumer({{u.property, u.value}}));
  EXPECT_EQ(consumer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(consumer.status().message(), HasSubstr(u.named));
}

TEST_P(UnsafeConsumerPropertyTest, RefusedInAProcessor) {
  const UnsafeProperty& u = GetParam();
  ProcessorOptions o = Processor();
  o.consumer_properties[u.property] = u.value;
  absl::Status s = Validate(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(u.named + "=" + u.value));
}

TEST_P(UnsafeConsumerPropertyTest, AllowedInUncheckedMode) {
  const UnsafeProperty& u = GetParam();
  ConsumerOptions o = Consumer({{u.property, u.value}});
  o.mode = Mode::kUnchecked;
  EXPECT_TRUE(Validate(o).ok());
}

INSTANTIATE_TEST_SUITE_P(
    All, UnsafeConsumerPropertyTest,
    ::testing::Values(
        UnsafeProperty{"enable.auto.commit", "true", "enable.auto.commit"},
        UnsafeProperty{"auto.commit.enable", "true", "auto.commit.enable"},
        UnsafeProperty{"isolation.level", "read_uncommitted",
                       "isolation.level"}));

TEST(ProcessorOptionsTest, Valid) { EXPECT_TRUE(Validate(Processor()).ok()); }

TEST(ProcessorOptionsTest, UnsafeProducerPropertyRefused) {
  ProcessorOptions o = Processor();
  o.producer_properties["acks"] = "1";
  absl::Status s = Validate(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("acks=1"));
}

TEST(ProcessorOptionsTest, TransactionalIdRequired) {
  ProcessorOptions o = Processor();
  o.transactional_id.clear();
  absl::Status s = Validate(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("transactional.id"));
}

TEST(ProcessorOptionsTest, InputTopicsRequired) {
  ProcessorOptions o = Processor();
  o.input_topics.clear();
  EXPECT_THAT(Validate(o).message(), HasSubstr("input_topics"));
}

TEST(ProcessorOptionsTest, BatchTimeMustFitTheTransactionTimeout) {
  ProcessorOptions o = Processor();
  o.producer_properties["transaction.timeout.ms"] = "1000";
  o.max_batch_time = std::chrono::milliseconds(1000);
  absl::Status s = Validate(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("transaction.timeout.ms"));
}

TEST(ProcessorOptionsTest, CreateRefusesUnsafeOptions) {
  ProcessorOptions o = Processor();
  o.consumer_properties["enable.auto.commit"] = "true";
  auto p = exactly::Processor::Create(
      o, [](const Message&, Emitter&) { return absl::OkStatus(); });
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("enable.auto.commit=true"));
}

}  // namespace
}  // namespace exactly
