// An idempotent librdkafka producer against the bundled broker while the broker drops
// responses after appending, and across a restart: the broker's log must hold every record
// exactly once, in order per partition. Assertions read the broker's own log, not only what a
// consumer sees.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "support/kafka_client.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::DeliveryCounter;
using ::exactly::testing::NewClient;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;
using ::exactly::testing::TempDir;

constexpr int32_t kPartitions = 3;

std::string ValueFor(int32_t partition, int64_t seq) {
  return absl::StrCat("p", partition, "-", seq);
}

RdKafkaPtr NewIdempotentProducer(const std::string& bootstrap, DeliveryCounter* counter) {
  return NewClient(RD_KAFKA_PRODUCER,
                   {{"bootstrap.servers", bootstrap},
                    {"enable.idempotence", "true"},
                    {"acks", "all"},
                    {"linger.ms", "2"},
                    // Small batches make many produce requests, so that 1 in 50 is a lot.
                    {"batch.num.messages", "50"},
                    {"message.timeout.ms", "120000"},
                    {"retry.backoff.ms", "10"},
                    {"reconnect.backoff.ms", "10"},
                    {"reconnect.backoff.max.ms", "100"}},
                   &DeliveryCounter::OnDelivery, counter);
}

// Produces records [from, to) for each partition, values "p<partition>-<seq>", and waits for
// every delivery report.
void ProduceRange(rd_kafka_t* producer, DeliveryCounter& counter, const std::string& topic,
                  int64_t from, int64_t to) {
  int64_t expected = counter.delivered.load() + counter.failed.load() + (to - from) * kPartitions;
  for (int64_t seq = from; seq < to; ++seq) {
    for (int32_t p = 0; p < kPartitions; ++p) {
      ASSERT_EQ(ProduceOne(producer, topic, p, absl::StrCat(seq), ValueFor(p, seq)),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    rd_kafka_poll(producer, 0);
  }
  while (counter.delivered.load() + counter.failed.load() < expected) {
    rd_kafka_poll(producer, 100);
  }
  ASSERT_EQ(rd_kafka_flush(producer, 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(counter.failed.load(), 0)
      << "last error: " << rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(counter.last_error.load()));
}

// Asserts that the broker's log of each partition is exactly p<partition>-0 .. p<partition>-(n-1)
// at consecutive offsets from 0.
void ExpectLogExactlyOnceInOrder(Broker& broker, const std::string& topic, int64_t n) {
  for (int32_t p = 0; p < kPartitions; ++p) {
    absl::StatusOr<std::vector<LoggedBatch>> log = broker.ReadLog(topic, p);
    ASSERT_TRUE(log.ok()) << log.status();
    int64_t next_seq = 0;
    int64_t next_offset = 0;
    for (const LoggedBatch& batch : *log) {
      EXPECT_GE(batch.producer_id, 0) << "every batch comes from the idempotent producer";
      for (const LoggedRecord& r : batch.records) {
        ASSERT_EQ(r.offset, next_offset) << "partition " << p;
        ASSERT_TRUE(r.value.has_value());
        ASSERT_EQ(*r.value, ValueFor(p, next_seq))
            << "partition " << p << " offset " << r.offset
            << ": a record is duplicated, missing or out of order";
        ++next_seq;
        ++next_offset;
      }
    }
    EXPECT_EQ(next_seq, n) << "partition " << p << " holds " << next_seq << " records";
    absl::StatusOr<PartitionOffsets> offsets = broker.Offsets(topic, p);
    ASSERT_TRUE(offsets.ok());
    EXPECT_EQ(offsets->high_watermark, n);
    EXPECT_EQ(offsets->log_end_offset, n);
  }
}

int64_t CountInHistory(Broker& broker, std::string_view needle) {
  int64_t n = 0;
  for (const std::string& line : broker.faults().History()) {
    if (line.find(needle) != std::string::npos) ++n;
  }
  return n;
}

TEST(IdempotentProducerTest, DroppedResponsesAfterAppendNeverDuplicateOrLose) {
  absl::StatusOr<std::unique_ptr<Broker>> broker = Broker::Start({});
  ASSERT_TRUE(broker.ok()) << broker.status();
  ASSERT_TRUE((*broker)->CreateTopic("idem", kPartitions).ok());
  (*broker)->faults().DropProduceResponses(/*count=*/-1, /*one_in=*/50);

  DeliveryCounter counter;
  RdKafkaPtr producer = NewIdempotentProducer((*broker)->bootstrap_servers(), &counter);
  ASSERT_TRUE(producer);
  const int64_t per_partition = 100000 / kPartitions + 1;  // 100,002 records in all
  ProduceRange(producer.get(), counter, "idem", 0, per_partition);
  EXPECT_EQ(counter.delivered.load(), per_partition * kPartitions);

  // The fault really fired: the client had to retry batches the broker already had.
  EXPECT_GT(CountInHistory(**broker, "dropped its response"), 5);
  ExpectLogExactlyOnceInOrder(**broker, "idem", per_partition);
}

TEST(IdempotentProducerTest, RestartWithDataDirLosesNothingAndStillDeduplicates) {
  TempDir dir;
  BrokerOptions options;
  options.data_dir = dir.path();
  absl::StatusOr<std::unique_ptr<Broker>> broker = Broker::Start(options);
  ASSERT_TRUE(broker.ok()) << broker.status();
  ASSERT_TRUE((*broker)->CreateTopic("durable", kPartitions).ok());

  DeliveryCounter counter;
  RdKafkaPtr producer = NewIdempotentProducer((*broker)->bootstrap_servers(), &counter);
  ProduceRange(producer.get(), counter, "durable", 0, 5000);
  ExpectLogExactlyOnceInOrder(**broker, "durable", 5000);

  ASSERT_TRUE((*broker)->Restart(Broker::RestartMode::kClean).ok());
  // Offsets continue where they were.
  for (int32_t p = 0; p < kPartitions; ++p) {
    absl::StatusOr<PartitionOffsets> offsets = (*broker)->Offsets("durable", p);
    ASSERT_TRUE(offsets.ok()) << offsets.status();
    EXPECT_EQ(offsets->log_end_offset, 5000);
  }
  // The producer's first batches after the restart are answered, then their responses
  // dropped: the retries must be recognised from the producer state read back from disk.
  (*broker)->faults().DropProduceResponses(/*count=*/3, /*one_in=*/1);
  ProduceRange(producer.get(), counter, "durable", 5000, 10000);
  EXPECT_EQ(CountInHistory(**broker, "dropped its response"), 3);
  ExpectLogExactlyOnceInOrder(**broker, "durable", 10000);

  // And a crash-style restart keeps everything that was acknowledged.
  ASSERT_TRUE((*broker)->Restart(Broker::RestartMode::kCrash).ok());
  ExpectLogExactlyOnceInOrder(**broker, "durable", 10000);
}

}  // namespace
}  // namespace exactly::broker
