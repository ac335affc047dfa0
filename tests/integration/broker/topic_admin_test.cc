// The admin operations of cluster/topic_admin.h on a BrokerState driven
// directly (no sockets): retention never deletes at or above the last stable
// offset, whatever the configs say, and a deleted topic leaves nothing in the
// store.
#include "cluster/topic_admin.h"

#include <asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/appender.h"
#include "cluster/broker_state.h"
#include "gtest/gtest.h"
#include "protocol/record_batch.h"
#include "storage/keys.h"
#include "support/temp_dir.h"
#include "util/shared_buffer.h"

namespace exactly::broker {
namespace {

class TopicAdminTest : public ::testing::Test {
 protected:
  void Open(const std::string& data_dir = "") {
    options_.data_dir = data_dir;
    absl::StatusOr<std::unique_ptr<BrokerState>> state =
        BrokerState::Open(options_, io_, faults_, nullptr);
    ASSERT_TRUE(state.ok()) << state.status();
    b_ = std::move(*state);
  }

  Partition& CreateTopic(const std::string& name) {
    EXPECT_TRUE(b_->CreateTopic(name, 1, {}).ok());
    return *b_->FindPartition(name, 0);
  }

  // Appends one batch of `records` records (transactional for `pid` when
  // `transactional`), then makes it visible as the commit pipeline would.
  void Append(Partition& partition, int records, int64_t pid = -1,
              bool transactional = false, int64_t timestamp = 0) {
    protocol::RecordBatchSpec spec;
    spec.base_timestamp = timestamp;
    if (pid >= 0) {
      spec.producer_id = pid;
      spec.producer_epoch = 0;
      spec.base_sequence = next_sequence_[pid];
      next_sequence_[pid] += records;
    }
    if (transactional) spec.attributes = protocol::kAttrTransactional;
    std::vector<protocol::RecordSpec> specs(static_cast<size_t>(records));
    for (int i = 0; i < records; ++i) {
      specs[static_cast<size_t>(i)].key = absl::StrCat("k", i);
      specs[static_cast<size_t>(i)].value = std::string(40, 'v');
    }
    absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(spec, specs);
    ASSERT_TRUE(batch.ok()) << batch.status();
    Topic* topic = b_->topics().Find(partition.topic());
    // As a request frame would hold it: the log keeps the buffer.
    SharedBuffer frame = CopyToSharedBuffer(*batch);
    AppendOutcome out =
        AppendRecords(*b_, partition, *topic, frame,
                      std::string_view(frame.get(), batch->size()));
    ASSERT_TRUE(out.error.ok()) << out.error.message;
    PublishAppends(*b_, partition);
  }

  ApiError SetConfig(const std::string& topic, const std::string& name,
                     const std::string& value) {
    return AlterTopicConfigs(*b_, topic,
                             {{name, ConfigChange::Op::kSet, value}},
                             /*replace_all=*/false, /*validate_only=*/false);
  }

  asio::io_context io_;
  Faults faults_;
  BrokerOptions options_;
  std::map<int64_t, int32_t> next_sequence_;
  std::unique_ptr<BrokerState> b_;  // last: destroyed first
};

TEST_F(TopicAdminTest, RetentionBytesStopsAtTheLastStableOffset) {
  Open();
  Partition& p = CreateTopic("txn");
  for (int i = 0; i < 3; ++i) Append(p, 1);            // offsets 0, 1, 2
  Append(p, 2, /*pid=*/1000, /*transactional=*/true);  // 3-4, left open
  for (int i = 0; i < 2; ++i) Append(p, 1);            // 5, 6
  ASSERT_EQ(p.last_stable_offset(), 3);
  ASSERT_EQ(p.log().high_watermark(), 7);

  // Retain nothing: only the batches wholly below the LSO may go.
  ASSERT_TRUE(SetConfig("txn", "retention.bytes", "0").ok());
  EXPECT_EQ(p.log().log_start_offset(), 3);
  ASSERT_EQ(p.log().batch_count(), 3u);
  EXPECT_EQ(p.log().batches().front().base_offset(), 3);
  // An append does not move it either while the transaction is open.
  Append(p, 1);
  EXPECT_EQ(p.log().log_start_offset(), 3);

  // The commit marker moves the LSO to the end: now everything may go.
  AppendMarker(*b_, p, 1000, 0, protocol::ControlType::kCommit, 0);
  PublishAppends(*b_, p);
  EXPECT_EQ(p.last_stable_offset(), 9);
  EXPECT_EQ(p.log().log_start_offset(), 9);
  EXPECT_EQ(p.log().batch_count(), 0u);
}

TEST_F(TopicAdminTest, RetentionMsStopsAtTheLastStableOffset) {
  Open();
  Partition& p = CreateTopic("old");
  Append(p, 1, -1, false, /*timestamp=*/1000);            // 0, ancient
  Append(p, 1, /*pid=*/7, /*transactional=*/true, 1000);  // 1, open, ancient
  Append(p, 1, -1, false, 1000);                          // 2, ancient
  Append(p, 1, -1, false, b_->NowMs());                   // 3, new
  ASSERT_TRUE(SetConfig("old", "retention.ms", "60000").ok());
  EXPECT_EQ(p.log().log_start_offset(), 1);
  AppendMarker(*b_, p, 7, 0, protocol::ControlType::kAbort, 0);  // 4
  PublishAppends(*b_, p);
  // Offsets 1 and 2 are old and now below the LSO; 3 and the marker are new.
  EXPECT_EQ(p.log().log_start_offset(), 3);
}

TEST_F(TopicAdminTest, CleanupPolicyWithoutDeleteTurnsRetentionOff) {
  Open();
  Partition& p = CreateTopic("policy");
  for (int i = 0; i < 3; ++i) Append(p, 1);
  ASSERT_TRUE(AlterTopicConfigs(
                  *b_, "policy",
                  {{"cleanup.policy", ConfigChange::Op::kSubtract, "delete"},
                   {"retention.bytes", ConfigChange::Op::kSet, "0"}},
                  false, false)
                  .ok());
  EXPECT_EQ(b_->topics().Find("policy")->config.Get("cleanup.policy"), "");
  EXPECT_EQ(p.log().log_start_offset(), 0);
  EXPECT_EQ(DeleteRecords(*b_, "policy", 0, 1).error.code,
            protocol::ErrorCode::kPolicyViolation);
  ASSERT_TRUE(SetConfig("policy", "cleanup.policy", "compact, delete").ok());
  EXPECT_EQ(p.log().log_start_offset(), 3);
}

TEST_F(TopicAdminTest, DeletedTopicLeavesNothingInTheStore) {
  testing::TempDir dir;
  Open(dir.path());
  Partition& p = CreateTopic("wiped");
  const uint32_t id = p.topic_id();
  Append(p, 2, /*pid=*/5);
  Append(p, 1, /*pid=*/5);
  ASSERT_EQ(DeleteRecords(*b_, "wiped", 0, 2).low_watermark, 2);
  b_->commits().CommitNow();
  auto count = [&](const std::string& prefix) {
    int n = 0;
    EXPECT_TRUE(b_->store()
                    ->ScanPrefix(prefix,
                                 [&](std::string_view, std::string_view) {
                                   ++n;
                                   return absl::OkStatus();
                                 })
                    .ok());
    return n;
  };
  ASSERT_EQ(count(keys::TopicDataPrefix('B', id)), 1);
  ASSERT_EQ(count(keys::TopicDataPrefix('P', id)), 1);
  ASSERT_EQ(count(keys::TopicDataPrefix('S', id)), 1);
  ASSERT_EQ(count(keys::Topic("wiped")), 1);

  ASSERT_TRUE(DeleteTopic(*b_, "wiped").ok());
  EXPECT_EQ(DeleteTopic(*b_, "wiped").code,
            protocol::ErrorCode::kUnknownTopicOrPartition);
  b_->commits().CommitNow();
  for (char kind : {'B', 'P', 'S'}) {
    EXPECT_EQ(count(keys::TopicDataPrefix(kind, id)), 0) << kind;
  }
  EXPECT_EQ(count(keys::Topic("wiped")), 0);

  // A topic of the same name gets a new id and starts empty after a reload.
  Partition& again = CreateTopic("wiped");
  EXPECT_NE(again.topic_id(), id);
  b_->commits().CommitNow();
  b_.reset();
  Open(dir.path());
  Partition* loaded = b_->FindPartition("wiped", 0);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->log().log_end_offset(), 0);
  EXPECT_EQ(loaded->producers().Find(5), nullptr);
}

}  // namespace
}  // namespace exactly::broker
