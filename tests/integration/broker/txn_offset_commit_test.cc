// A consume-transform-produce loop's offsets committed with its transaction
// (librdkafka's send_offsets_to_transaction: AddOffsetsToTxn, TxnOffsetCommit,
// EndTxn): they become the group's committed offsets only when the
// transaction commits, never when it aborts, and while it is open a
// read_committed consumer cannot fetch them (UNSTABLE_OFFSET_COMMIT).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "support/group_helpers.h"
#include "support/kafka_client.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::GroupConsumer;
using ::exactly::testing::NewClient;
using ::exactly::testing::PollUntil;
using ::exactly::testing::ProduceOne;
using ::exactly::testing::RdKafkaPtr;

void ExpectOk(rd_kafka_error_t* error, const char* what) {
  EXPECT_EQ(error, nullptr)
      << what << ": " << (error ? rd_kafka_error_string(error) : "");
  if (error != nullptr) rd_kafka_error_destroy(error);
}

// Sends `offset` for input[0] as part of the producer's open transaction, on
// behalf of `consumer`'s group.
void SendOffset(rd_kafka_t* producer, GroupConsumer& consumer, int64_t offset) {
  rd_kafka_topic_partition_list_t* offsets =
      rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(offsets, "input", 0)->offset = offset;
  rd_kafka_consumer_group_metadata_t* metadata =
      rd_kafka_consumer_group_metadata(consumer.handle());
  ExpectOk(
      rd_kafka_send_offsets_to_transaction(producer, offsets, metadata, 30000),
      "send_offsets_to_transaction");
  rd_kafka_consumer_group_metadata_destroy(metadata);
  rd_kafka_topic_partition_list_destroy(offsets);
}

TEST(TxnOffsetCommitTest, OffsetsFollowTheTransactionsOutcome) {
  BrokerOptions options;
  options.group_min_session_timeout_ms = 1000;
  absl::StatusOr<std::unique_ptr<Broker>> started = Broker::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  Broker& broker = **started;
  ASSERT_TRUE(broker.CreateTopic("input", 1).ok());
  ASSERT_TRUE(broker.CreateTopic("output", 1).ok());
  const std::string bootstrap = broker.bootstrap_servers();
  {
    RdKafkaPtr p =
        NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}});
    for (int i = 0; i < 20; ++i) {
      ASSERT_EQ(ProduceOne(p.get(), "input", 0, "k", absl::StrCat("in-", i)),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // The consumer whose group the transactions commit for (a member of it,
  // so TxnOffsetCommit v3 carries a valid generation and member id).
  GroupConsumer consumer(bootstrap, "eos-group");
  consumer.Subscribe("input");
  int consumed = 0;
  ASSERT_TRUE(PollUntil(
      {&consumer}, [&] { return consumed == 20; },
      [&](GroupConsumer&, const ::exactly::testing::ConsumedRecord&) {
        ++consumed;
      }));

  RdKafkaPtr producer = NewClient(
      RD_KAFKA_PRODUCER,
      {{"bootstrap.servers", bootstrap}, {"transactional.id", "eos-writer"}});
  ASSERT_TRUE(producer);
  ExpectOk(rd_kafka_init_transactions(producer.get(), 30000), "init");

  // Committed transaction: its offset becomes the group's.
  ExpectOk(rd_kafka_begin_transaction(producer.get()), "begin");
  ASSERT_EQ(ProduceOne(producer.get(), "output", 0, "k", "out-1"),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  SendOffset(producer.get(), consumer, 10);
  EXPECT_EQ(*broker.CommittedOffset("eos-group", "input", 0), std::nullopt)
      << "invisible before the commit";
  ExpectOk(rd_kafka_commit_transaction(producer.get(), 30000), "commit");
  EXPECT_EQ(*broker.CommittedOffset("eos-group", "input", 0), 10);

  // Aborted transaction: its offset is dropped.
  ExpectOk(rd_kafka_begin_transaction(producer.get()), "begin");
  SendOffset(producer.get(), consumer, 15);
  ExpectOk(rd_kafka_abort_transaction(producer.get(), 30000), "abort");
  EXPECT_EQ(*broker.CommittedOffset("eos-group", "input", 0), 10);

  // Open transaction: a read_committed consumer's OffsetFetch (RequireStable)
  // keeps answering UNSTABLE_OFFSET_COMMIT, so it cannot read the old offset
  // and start from there; once the transaction commits it reads the new one.
  ExpectOk(rd_kafka_begin_transaction(producer.get()), "begin");
  SendOffset(producer.get(), consumer, 17);
  GroupConsumer reader(bootstrap, "eos-group",
                       {{"isolation.level", "read_committed"}});
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, "input", 0);
  EXPECT_EQ(rd_kafka_committed(reader.handle(), list, 2000),
            RD_KAFKA_RESP_ERR__TIMED_OUT)
      << "offset " << list->elems[0].offset;
  // A read_uncommitted one is not held back, and sees the last committed.
  GroupConsumer uncommitted(bootstrap, "eos-group",
                            {{"isolation.level", "read_uncommitted"}});
  auto seen = uncommitted.Committed("input", 0);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->first, 10);
  ExpectOk(rd_kafka_commit_transaction(producer.get(), 30000), "commit");
  list->elems[0].offset = RD_KAFKA_OFFSET_INVALID;
  ASSERT_EQ(rd_kafka_committed(reader.handle(), list, 30000),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(list->elems[0].offset, 17);
  rd_kafka_topic_partition_list_destroy(list);
  EXPECT_EQ(*broker.CommittedOffset("eos-group", "input", 0), 17);
}

}  // namespace
}  // namespace exactly::broker
