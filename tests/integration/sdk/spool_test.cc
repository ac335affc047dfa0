// The spooled producer against the bundled broker: every record whose
// Send() returned OK reaches Kafka exactly once and in order; Kafka's
// checkpoint (not the local state) decides what is committed; the spool's
// bounds, a full disk and damaged files lose nothing that was accepted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <stdio.h>
#include <sys/wait.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "spool/store.h"
#include "spool_test_util.h"
#include "storage/fault_injecting_file_system.h"
#include "unit/sdk/spool_files.h"

namespace exactly::testing {
namespace {

using ::testing::HasSubstr;

// Values per partition, in offset order.
std::map<int32_t, std::vector<std::string>> ByPartition(
    const std::vector<SpooledRecord>& records) {
  std::map<int32_t, std::vector<std::string>> out;
  for (const SpooledRecord& r : records) out[r.partition].push_back(r.value);
  return out;
}

// Values per key, in offset order (a key's records share a partition).
std::map<std::string, std::vector<std::string>> ByKey(
    const std::vector<SpooledRecord>& records) {
  std::map<std::string, std::vector<std::string>> out;
  for (const SpooledRecord& r : records) out[r.key].push_back(r.value);
  return out;
}

// Runs `exactly-spool ARGS`; its exit status and output.
std::pair<int, std::string> RunTool(const std::string& args) {
  const std::string command =
      std::string(EXACTLY_SPOOL_TOOL) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class SpooledProducerTest : public SpoolTest {
 protected:
  // A spool on a file system whose faults the test injects.
  struct OnFaultyDisk {
    std::shared_ptr<broker::FaultInjectingFileSystem> fs;
    std::unique_ptr<rocksdb::Env> env;
    std::unique_ptr<SpooledProducer> spool;
  };
  OnFaultyDisk OpenOnFaultyDisk() {
    OnFaultyDisk d;
    d.fs = std::make_shared<broker::FaultInjectingFileSystem>(
        rocksdb::FileSystem::Default());
    d.env = broker::FaultInjectingFileSystem::NewEnv(d.fs);
    SpoolOptions o =
        SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
    o.env = d.env.get();
    auto spool = SpooledProducer::Create(o);
    EXPECT_TRUE(spool.ok()) << spool.status();
    if (spool.ok()) d.spool = std::move(*spool);
    return d;
  }

  // Sends values first..last, each of which must be accepted.
  static void SendAccepted(SpooledProducer& spool, const std::string& topic,
                           int first, int last,
                           std::multiset<std::string>& accepted) {
    for (int i = first; i <= last; ++i) {
      absl::Status s = spool.Send({.topic = topic, .value = Value(i)});
      ASSERT_TRUE(s.ok()) << s;
      accepted.insert(Value(i));
    }
  }
};

TEST_F(SpooledProducerTest, EveryRecordArrivesOnceAndInOrder) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 150;
  const std::string topic = NewTopic("spool-basic", 3);
  auto spool = SpooledProducer::Create(
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn")));
  ASSERT_TRUE(spool.ok()) << spool.status();
  ASSERT_TRUE((*spool)->exactly_once());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // One key per thread: its records share a partition, in Send order.
      const std::string key = "thread-" + std::to_string(t);
      for (int i = 0; i < kPerThread; ++i) {
        absl::Status s = (*spool)->Send(
            {.topic = topic, .key = key, .value = Value(t * kPerThread + i)});
        ASSERT_TRUE(s.ok()) << s;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  absl::Status flushed = (*spool)->Flush(kPatience);
  ASSERT_TRUE(flushed.ok()) << flushed;
  const SpoolMetrics m = (*spool)->metrics();
  EXPECT_EQ(m.appended, uint64_t{kThreads * kPerThread});
  EXPECT_EQ(m.committed, uint64_t{kThreads * kPerThread});
  EXPECT_EQ(m.depth, 0u);
  EXPECT_EQ(m.bytes, 0u);
  EXPECT_EQ(m.quarantined, 0u);
  EXPECT_EQ(m.committed_sequence, uint64_t{kThreads * kPerThread});
  EXPECT_LE(m.group_commits, m.appended);
  EXPECT_GE(m.transactions, 1u);
  ASSERT_TRUE((*spool)->Close().ok());

  const auto records = ReadCommittedAssigned(bootstrap(), topic, 3);
  EXPECT_EQ(ValuesOf(records), Expected(0, kThreads * kPerThread - 1));
  for (const auto& [key, values] : ByKey(records)) {
    EXPECT_EQ(values.size(), size_t{kPerThread});
    EXPECT_TRUE(std::is_sorted(values.begin(), values.end()))
        << "key " << key << " out of order";
  }
}

TEST_F(SpooledProducerTest, ABatchIsOneWriteAndOneSync) {
  const std::string topic = NewTopic("spool-batch", 1);
  auto spool = SpooledProducer::Create(
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn")));
  ASSERT_TRUE(spool.ok()) << spool.status();
  std::vector<std::string> values;
  for (int i = 0; i < 100; ++i) values.push_back(Value(i));
  std::vector<Record> records;
  for (const std::string& v : values)
    records.push_back({.topic = topic, .value = v});
  ASSERT_TRUE((*spool)->SendBatch(records, "99").ok());
  EXPECT_EQ((*spool)->metrics().appended, 100u);
  EXPECT_EQ((*spool)->metrics().group_commits, 1u);
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  ASSERT_TRUE((*spool)->Close().ok());
  const auto read = ReadCommittedAssigned(bootstrap(), topic, 1);
  std::vector<std::string> got;
  for (const SpooledRecord& r : read) got.push_back(r.value);
  EXPECT_EQ(got, values);
}

// A transaction normally stays open for max_batch_time collecting records;
// Flush() has the drainer commit what it holds at once instead.
TEST_F(SpooledProducerTest, FlushDoesNotWaitForTheTransactionToFill) {
  const std::string topic = NewTopic("spool-flush", 1);
  SpoolOptions o =
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
  o.producer.properties["transaction.timeout.ms"] = "120000";
  o.max_batch_time = std::chrono::seconds(60);
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(i)}).ok());
    // Well under max_batch_time: only a hurried commit makes it.
    ASSERT_TRUE((*spool)->Flush(std::chrono::seconds(20)).ok()) << i;
    EXPECT_EQ((*spool)->metrics().committed, static_cast<uint64_t>(i + 1));
  }
  ASSERT_TRUE((*spool)->Close().ok());
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)),
            Expected(0, 2));
}

TEST_F(SpooledProducerTest, SendReturnsBeforeKafkaHasTheRecordAndResumesAfter) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-resume", 2);
  const std::string txn = TestCluster::UniqueName("txn");
  BlockDrainer();
  {
    auto spool = SpooledProducer::Create(SpoolOpts(temp_.Sub("spool"), txn));
    ASSERT_TRUE(spool.ok()) << spool.status();
    EXPECT_EQ((*spool)->recovered_cursor(), "");
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE((*spool)
                      ->Send({.topic = topic, .key = "k", .value = Value(i)},
                             std::to_string(i))
                      .ok());
    }
    const SpoolMetrics m = (*spool)->metrics();
    EXPECT_EQ(m.depth, 50u);
    EXPECT_EQ(m.committed, 0u);
    EXPECT_GT(m.bytes, 50u * 7);
    // Nothing drained: Close leaves the records in the spool and says so.
    absl::Status closed = (*spool)->Close(std::chrono::milliseconds(50));
    EXPECT_EQ(closed.code(), absl::StatusCode::kDeadlineExceeded) << closed;
    EXPECT_THAT(closed.message(), HasSubstr("50 record(s) remain"));
  }
  UnblockDrainer();
  auto spool = SpooledProducer::Create(SpoolOpts(temp_.Sub("spool"), txn));
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_EQ((*spool)->recovered_cursor(), "49");
  EXPECT_EQ((*spool)->metrics().depth, 50u);
  for (int i = 50; i < 80; ++i) {
    ASSERT_TRUE((*spool)
                    ->Send({.topic = topic, .key = "k", .value = Value(i)},
                           std::to_string(i))
                    .ok());
  }
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  EXPECT_EQ((*spool)->metrics().depth, 0u);
  ASSERT_TRUE((*spool)->Close().ok());
  const auto records = ReadCommittedAssigned(bootstrap(), topic, 2);
  EXPECT_EQ(ValuesOf(records), Expected(0, 79));
  for (const auto& [partition, values] : ByPartition(records)) {
    EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
  }
}

// The state a crash leaves between a commit and the local delete: the
// records are still in the spool, and Kafka has them. The new instance
// learns the watermark from Kafka's checkpoint and sends none of them again.
TEST_F(SpooledProducerTest, RecordsCommittedButNotDeletedAreNotSentAgain) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-truth", 1);
  const std::string txn = TestCluster::UniqueName("txn");
  const std::string dir = temp_.Sub("spool");
  const std::string before = temp_.Sub("spool-before-delivery");
  BlockDrainer();
  {
    auto spool = SpooledProducer::Create(SpoolOpts(dir, txn));
    ASSERT_TRUE(spool.ok()) << spool.status();
    for (int i = 0; i < 30; ++i) {
      ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(i)}).ok());
    }
    (*spool)->Close().IgnoreError();
  }
  std::filesystem::copy(dir, before, std::filesystem::copy_options::recursive);
  UnblockDrainer();
  {
    auto spool = SpooledProducer::Create(SpoolOpts(dir, txn));
    ASSERT_TRUE(spool.ok()) << spool.status();
    ASSERT_TRUE((*spool)->Flush(kPatience).ok());
    EXPECT_EQ((*spool)->metrics().committed, 30u);
    ASSERT_TRUE((*spool)->Close().ok());
  }
  // Back to the copy: 30 records spooled, none deleted.
  std::filesystem::remove_all(dir);
  std::filesystem::rename(before, dir);
  {
    auto spool = SpooledProducer::Create(SpoolOpts(dir, txn));
    ASSERT_TRUE(spool.ok()) << spool.status();
    EXPECT_EQ((*spool)->metrics().depth, 30u);
    ASSERT_TRUE((*spool)->Flush(kPatience).ok());
    const SpoolMetrics m = (*spool)->metrics();
    EXPECT_EQ(m.depth, 0u);
    EXPECT_EQ(m.committed, 0u) << "records already in Kafka were sent again";
    EXPECT_EQ(m.sent, 0u);
    EXPECT_EQ(m.committed_sequence, 30u);
    // New records get new sequences and go out once.
    ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(30)}).ok());
    ASSERT_TRUE((*spool)->Flush(kPatience).ok());
    EXPECT_EQ((*spool)->metrics().next_sequence, 32u);
    ASSERT_TRUE((*spool)->Close().ok());
  }
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)),
            Expected(0, 30));
}

// A commit that took effect in Kafka while the drainer gave up waiting for
// its answer (EndTxn answered late): the recovery that follows must take
// Kafka's checkpoint, which this same instance wrote, as the watermark. It
// once compared it with the spool as opened, called it "ahead of this
// spool" and sent the committed records again.
TEST_F(SpooledProducerTest, ACommitAnsweredTooLateIsNotSentAgain) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-late-commit", 1);
  SpoolOptions o =
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
  o.producer.transaction_call_timeout = std::chrono::milliseconds(500);
  o.producer.retry.max_retries = 0;
  // The 20 records below must be one transaction: while EndTxn answers late,
  // every commit after the first (the recovery's probe included) times out,
  // so records left to a second batch would wait for ClearDelays(). A batch
  // ends on its count, not on time: a slow machine may take longer than
  // any max_batch_time to spool them (TSan under load: CI, 2026-12-06).
  o.max_batch_records = 20;
  o.max_batch_time = std::chrono::seconds(5);  // < transaction.timeout.ms
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  // A first record goes through a recovery (its probe) and one commit.
  ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(0)}).ok());
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  ASSERT_TRUE(
      cluster_->InjectDelay(api::kEndTxn, std::chrono::milliseconds(3000))
          .ok());
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(i)}).ok());
  }
  // The broker commits at once (the first record and its marker, then 20
  // records and theirs); only the answer is late, and the drainer stops
  // waiting for it after 500 ms.
  ASSERT_TRUE(Eventually([&] {
    auto offsets = cluster_->broker()->Offsets(topic, 0);
    return offsets.ok() && offsets->last_stable_offset >= 23;
  }));
  ASSERT_TRUE(Eventually([&] {
    return (*spool)->metrics().drainer_errors > 0;
  })) << "the late answer did not fail the drainer's commit";
  cluster_->ClearDelays();
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  const SpoolMetrics m = (*spool)->metrics();
  EXPECT_EQ(m.depth, 0u);
  EXPECT_EQ(m.committed_sequence, 21u);
  EXPECT_EQ(m.sent, 21u) << "committed records were sent again";
  ASSERT_TRUE((*spool)->Close().ok());
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)),
            Expected(0, 20));
  for (const absl::Status& s : reports_.all()) {
    EXPECT_FALSE(absl::StrContains(s.message(), "ahead of this spool")) << s;
  }
}

TEST_F(SpooledProducerTest, WithoutATransactionalIdRecordsCarryDedupHeaders) {
  const std::string topic = NewTopic("spool-alo", 2);
  SpoolOptions o = SpoolOpts(temp_.Sub("spool"), "");
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_FALSE((*spool)->exactly_once());
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(
        (*spool)->Send({.topic = topic, .key = "k", .value = Value(i)}).ok());
  }
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  const std::string id = (*spool)->spool_id();
  ASSERT_TRUE((*spool)->Close().ok());
  const auto records = ReadCommittedAssigned(bootstrap(), topic, 2);
  EXPECT_EQ(ValuesOf(records), Expected(0, 39));
  std::set<std::string> seqs;
  for (const SpooledRecord& r : records) {
    ASSERT_EQ(r.headers.count("exactly.spool.id"), 1u);
    EXPECT_EQ(r.headers.at("exactly.spool.id"), id);
    seqs.insert(r.headers.at("exactly.spool.seq"));
  }
  EXPECT_EQ(seqs.size(), 40u);
  EXPECT_EQ(seqs.count("1"), 1u);
  EXPECT_EQ(seqs.count("40"), 1u);
}

TEST_F(SpooledProducerTest, AnotherInstanceWithTheSameIdStopsTheDrainer) {
  const std::string topic = NewTopic("spool-fenced", 1);
  const std::string txn = TestCluster::UniqueName("txn");
  auto first = SpooledProducer::Create(SpoolOpts(temp_.Sub("a"), txn));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->Send({.topic = topic, .value = Value(0)}).ok());
  ASSERT_TRUE((*first)->Flush(kPatience).ok());
  auto second = SpooledProducer::Create(SpoolOpts(temp_.Sub("b"), txn));
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE((*second)->Send({.topic = topic, .value = Value(1)}).ok());
  ASSERT_TRUE((*second)->Flush(kPatience).ok());
  // The first one's next transaction is fenced: its drainer stops, the
  // record stays spooled, Send still works locally.
  ASSERT_TRUE((*first)->Send({.topic = topic, .value = Value(2)}).ok());
  absl::Status s = (*first)->Flush(kPatience);
  EXPECT_TRUE(IsFenced(s) || absl::StrContains(s.message(), "fenced")) << s;
  EXPECT_FALSE((*first)->metrics().drainer_status.ok());
  EXPECT_EQ((*first)->metrics().depth, 1u);
  ASSERT_TRUE((*second)->Close().ok());
  (*first)->Close().IgnoreError();
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)),
            Expected(0, 1));
}

TEST_F(SpooledProducerTest,
       AFullSpoolFailsAtOnceWhenConfiguredAndLosesNothing) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-full-fail", 1);
  SpoolOptions o =
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
  o.max_records = 10;
  o.when_full = SpoolFullPolicy::kFail;
  BlockDrainer();
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(i)}).ok());
  }
  absl::Status full = (*spool)->Send({.topic = topic, .value = Value(10)});
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  EXPECT_THAT(full.message(), HasSubstr("spool full"));
  EXPECT_THAT(full.message(), HasSubstr("not spooled"));
  EXPECT_EQ((*spool)->metrics().depth, 10u);
  EXPECT_EQ((*spool)->metrics().appended, 10u);
  UnblockDrainer();
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(10)}).ok());
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  ASSERT_TRUE((*spool)->Close().ok());
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)),
            Expected(0, 10));
}

TEST_F(SpooledProducerTest, AFullSpoolBlocksUntilTheDrainerMakesRoom) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-full-block", 1);
  SpoolOptions o =
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
  o.max_records = 5;
  o.when_full = SpoolFullPolicy::kBlock;
  o.full_timeout = std::chrono::milliseconds(50);
  BlockDrainer();
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE((*spool)->Send({.topic = topic, .value = Value(i)}).ok());
  }
  // Blocked for full_timeout, then refused: not dropped.
  absl::Status timed_out = (*spool)->Send({.topic = topic, .value = "refused"});
  EXPECT_EQ(timed_out.code(), absl::StatusCode::kResourceExhausted)
      << timed_out;
  EXPECT_THAT(timed_out.message(), HasSubstr("spool full for 50 ms"));
  (*spool)->Close().IgnoreError();

  o.full_timeout = kPatience;
  auto blocking = SpooledProducer::Create(o);
  ASSERT_TRUE(blocking.ok()) << blocking.status();
  std::atomic<int> sent{0};
  std::thread sender([&] {
    for (int i = 5; i < 25; ++i) {
      absl::Status s = (*blocking)->Send({.topic = topic, .value = Value(i)});
      ASSERT_TRUE(s.ok()) << s;
      ++sent;
    }
  });
  // The sender fills nothing: the spool already holds 5 (max_records).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(sent.load(), 0);
  EXPECT_EQ((*blocking)->metrics().depth, 5u);
  UnblockDrainer();
  sender.join();
  EXPECT_EQ(sent.load(), 20);
  ASSERT_TRUE((*blocking)->Flush(kPatience).ok());
  ASSERT_TRUE((*blocking)->Close().ok());
  const auto records = ReadCommittedAssigned(bootstrap(), topic, 1);
  EXPECT_EQ(ValuesOf(records), Expected(0, 24));
  const std::vector<std::string> in_order = ByPartition(records)[0];
  EXPECT_TRUE(std::is_sorted(in_order.begin(), in_order.end()));
}

// Room comes back only when the drainer commits; a Send waiting for it (or
// refused for want of it) makes the drainer commit what it has instead of
// waiting out max_batch_time for records that cannot come.
TEST_F(SpooledProducerTest, AFullSpoolDoesNotWaitForTheTransactionToFill) {
  const std::string topic = NewTopic("spool-full-hurry", 1);
  SpoolOptions o =
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
  o.max_records = 10;
  // A transaction would otherwise stay open for 30 s, three times as long
  // as a blocked Send waits, or a refused one is retried.
  o.producer.properties["transaction.timeout.ms"] = "60000";
  o.max_batch_time = std::chrono::seconds(30);
  o.when_full = SpoolFullPolicy::kBlock;
  o.full_timeout = std::chrono::seconds(10);
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  for (int i = 0; i < 40; ++i) {
    absl::Status s = (*spool)->Send({.topic = topic, .value = Value(i)});
    ASSERT_TRUE(s.ok()) << i << ": " << s;
  }
  ASSERT_TRUE((*spool)->Close(kPatience).ok());

  o.dir = temp_.Sub("spool-fail");
  o.producer.transactional_id = TestCluster::UniqueName("txn");
  o.when_full = SpoolFullPolicy::kFail;
  auto failing = SpooledProducer::Create(o);
  ASSERT_TRUE(failing.ok()) << failing.status();
  for (int i = 40; i < 80; ++i) {
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    absl::Status s;
    while (!(s = (*failing)->Send({.topic = topic, .value = Value(i)})).ok()) {
      ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
      ASSERT_LT(std::chrono::steady_clock::now(), give_up)
          << "record " << i << " refused for 10 s: the drainer waited for "
          << "its transaction to fill";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ASSERT_TRUE((*failing)->Close(kPatience).ok());
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)),
            Expected(0, 79));
}

TEST_F(SpooledProducerTest, ADiskFullFailsTheSendThatHitItAndLosesNothing) {
  const std::string topic = NewTopic("spool-enospc", 1);
  OnFaultyDisk disk = OpenOnFaultyDisk();
  ASSERT_NE(disk.spool, nullptr);
  SpooledProducer& spool = *disk.spool;
  std::multiset<std::string> accepted;
  SendAccepted(spool, topic, 0, 19, accepted);
  disk.fs->SetNoSpace(true);
  for (int i = 20; i < 25; ++i) {
    absl::Status s = spool.Send({.topic = topic, .value = Value(i)});
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(s.message(), HasSubstr("No space left on device"));
    EXPECT_THAT(s.message(), HasSubstr("not spooled"));
  }
  disk.fs->SetNoSpace(false);
  SendAccepted(spool, topic, 25, 39, accepted);
  ASSERT_TRUE(spool.Flush(kPatience).ok());
  EXPECT_EQ(spool.metrics().appended, 35u);
  EXPECT_EQ(spool.metrics().quarantined, 0u);
  ASSERT_TRUE(spool.Close().ok());
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)), accepted);
}

// A failed fsync after the group reached the WAL: the Sends of that group
// fail, and their records, though written, are never sent; the spool goes on
// once syncs work again.
TEST_F(SpooledProducerTest, AFailedSyncFailsItsSendsAndTheirRecordsAreNotSent) {
  const std::string topic = NewTopic("spool-eio", 1);
  OnFaultyDisk disk = OpenOnFaultyDisk();
  ASSERT_NE(disk.spool, nullptr);
  SpooledProducer& spool = *disk.spool;
  std::multiset<std::string> accepted;
  SendAccepted(spool, topic, 0, 9, accepted);
  disk.fs->SetSyncsFail(true);
  for (int i = 10; i < 15; ++i) {
    absl::Status s = spool.Send({.topic = topic, .value = Value(i)});
    EXPECT_FALSE(s.ok()) << i;
    EXPECT_THAT(s.message(), HasSubstr("fsync failed"));
    EXPECT_THAT(s.message(), HasSubstr("not spooled"));
  }
  disk.fs->SetSyncsFail(false);
  SendAccepted(spool, topic, 15, 29, accepted);
  ASSERT_TRUE(spool.Flush(kPatience).ok());
  EXPECT_EQ(spool.metrics().appended, 25u);
  EXPECT_EQ(spool.metrics().quarantined, 0u);
  EXPECT_EQ(spool.metrics().depth, 0u);
  ASSERT_TRUE(spool.Close().ok());
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)), accepted);
}

class SpoolCorruptionTest : public SpoolTest {
 protected:
  // Spools records 0..59 (three batches of 20: three group commits) while
  // the drainer is kept away, and closes the spool.
  void SpoolSixty(const std::string& dir, const std::string& txn,
                  const std::string& topic) {
    BlockDrainer();
    auto spool = SpooledProducer::Create(SpoolOpts(dir, txn));
    ASSERT_TRUE(spool.ok()) << spool.status();
    for (int b = 0; b < 3; ++b) {
      std::vector<std::string> values;
      for (int i = 20 * b; i < 20 * b + 20; ++i) values.push_back(Padded(i));
      std::vector<Record> records;
      for (const std::string& v : values)
        records.push_back({.topic = topic, .value = v});
      ASSERT_TRUE((*spool)->SendBatch(records).ok());
    }
    (*spool)->Close().IgnoreError();
    UnblockDrainer();
  }

  // 100-byte values that can be found in the files.
  static std::string Padded(int i) {
    std::string v = Value(i) + "-";
    v.resize(100, 'x');
    return v;
  }

  // Reopens the spool and drains it; checks that exactly `damaged` are
  // missing from Kafka, quarantined and counted, the rest there once.
  void ExpectDeliveredExcept(const std::string& dir, const std::string& txn,
                             const std::string& topic, std::set<int> damaged) {
    auto spool = SpooledProducer::Create(SpoolOpts(dir, txn));
    ASSERT_TRUE(spool.ok()) << spool.status();
    ASSERT_TRUE((*spool)->Flush(kPatience).ok());
    const SpoolMetrics m = (*spool)->metrics();
    EXPECT_EQ(m.quarantined, damaged.size());
    EXPECT_EQ(m.depth, 0u);
    EXPECT_EQ(m.committed, 60 - damaged.size());
    std::set<uint64_t> quarantined_seqs;
    for (const QuarantinedRecord& q : (*spool)->Quarantined()) {
      EXPECT_THAT(q.reason, HasSubstr("CRC-32C"));
      EXPECT_EQ(q.records, 1u);
      EXPECT_THAT(q.bytes, HasSubstr(topic)) << "kept as found";
      quarantined_seqs.insert(q.sequence);
    }
    std::set<uint64_t> expected_seqs;
    for (int i : damaged) expected_seqs.insert(static_cast<uint64_t>(i) + 1);
    EXPECT_EQ(quarantined_seqs, expected_seqs);
    int reported = 0;
    for (const absl::Status& r : reports_.all()) {
      reported += absl::StrContains(r.message(), "moved to the quarantine");
    }
    EXPECT_EQ(reported, static_cast<int>(damaged.size()))
        << "each quarantined record is reported";
    ASSERT_TRUE((*spool)->Close().ok());
    std::multiset<std::string> expected;
    for (int i = 0; i < 60; ++i) {
      if (damaged.count(i) == 0) expected.insert(Padded(i));
    }
    const auto records = ReadCommittedAssigned(bootstrap(), topic, 1);
    EXPECT_EQ(ValuesOf(records), expected);
    std::vector<std::string> in_order;
    for (const SpooledRecord& r : records) in_order.push_back(r.value);
    EXPECT_TRUE(std::is_sorted(in_order.begin(), in_order.end()));
    // The tool agrees: nothing damaged is left, two are in the quarantine.
    auto [status, out] = RunTool("verify " + dir);
    EXPECT_EQ(status, 0) << out;
    auto [qstatus, qout] = RunTool("quarantine " + dir);
    EXPECT_EQ(qstatus, 0) << qout;
    EXPECT_THAT(qout, HasSubstr(absl::StrCat(damaged.size(), " entries")));
  }
};

TEST_F(SpoolCorruptionTest,
       FlippedBytesInTheWalAreQuarantinedTheRestDelivered) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-wal-damage", 1);
  const std::string txn = TestCluster::UniqueName("txn");
  const std::string dir = temp_.Sub("spool");
  SpoolSixty(dir, txn, topic);
  // One byte in record 15's value (first group) and in record 47's (third).
  ASSERT_EQ(FlipByteIn(dir, ".log", Padded(15).substr(0, 20)), 1);
  ASSERT_EQ(FlipByteIn(dir, ".log", Padded(47).substr(0, 20)), 1);
  auto [status, out] = RunTool("verify " + dir);
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(out, HasSubstr("DAMAGED   sequence 16"));
  EXPECT_THAT(out, HasSubstr("DAMAGED   sequence 48"));
  ExpectDeliveredExcept(dir, txn, topic, {15, 47});
}

TEST_F(SpoolCorruptionTest,
       FlippedBytesInAnSstFileAreQuarantinedTheRestDelivered) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-sst-damage", 1);
  const std::string txn = TestCluster::UniqueName("txn");
  const std::string dir = temp_.Sub("spool");
  SpoolSixty(dir, txn, topic);
  {
    // Flush the records from the WAL into an SST file.
    internal::spool::StoreState state;
    auto store = internal::spool::SpoolStore::Open({.dir = dir}, &state);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->db()->Flush(rocksdb::FlushOptions()).ok());
  }
  ASSERT_EQ(FlipByteIn(dir, ".sst", Padded(3).substr(0, 20)), 1);
  ASSERT_EQ(FlipByteIn(dir, ".sst", Padded(30).substr(0, 20)), 1);
  auto [status, out] = RunTool("verify " + dir);
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(out, HasSubstr("DAMAGED   sequence 4 "));
  EXPECT_THAT(out, HasSubstr("DAMAGED   sequence 31 "));
  ExpectDeliveredExcept(dir, txn, topic, {3, 30});
}

TEST_F(SpooledProducerTest, TheToolInspectsASpool) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-tool", 1);
  const std::string dir = temp_.Sub("spool");
  BlockDrainer();
  {
    auto spool =
        SpooledProducer::Create(SpoolOpts(dir, TestCluster::UniqueName("txn")));
    ASSERT_TRUE(spool.ok()) << spool.status();
    for (int i = 0; i < 12; ++i) {
      ASSERT_TRUE((*spool)
                      ->Send({.topic = topic, .value = Value(i)},
                             "c" + std::to_string(i))
                      .ok());
    }
    // While the producer owns the spool, the tool still reads it.
    auto [status, out] = RunTool("inspect " + dir);
    EXPECT_EQ(status, 0) << out;
    EXPECT_THAT(out, HasSubstr("depth            12 records"));
    (*spool)->Close().IgnoreError();
  }
  auto [status, out] = RunTool("inspect " + dir);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("depth            12 records"));
  EXPECT_THAT(out, HasSubstr("sequences        1..12"));
  EXPECT_THAT(out, HasSubstr("next sequence    13"));
  EXPECT_THAT(out, HasSubstr("oldest record"));
  EXPECT_THAT(out, HasSubstr("quarantined      0 records"));
  EXPECT_THAT(out, HasSubstr("cursor           \"c11\""));
  auto [vstatus, vout] = RunTool("verify " + dir);
  EXPECT_EQ(vstatus, 0) << vout;
  EXPECT_THAT(vout, HasSubstr("OK: 12 records intact"));
  EXPECT_EQ(RunTool("inspect " + temp_.Sub("nothing")).first, 2);
  EXPECT_EQ(RunTool("frobnicate " + dir).first, 2);
}

TEST(SpoolOptionsTest, ValidateNamesTheProblem) {
  SpoolOptions o;
  o.producer.bootstrap_servers = "localhost:9092";
  EXPECT_THAT(Validate(o).message(), HasSubstr("dir is required"));
  o.dir = "/tmp/x";
  EXPECT_TRUE(Validate(o).ok());
  o.producer.properties["acks"] = "1";
  EXPECT_THAT(Validate(o).message(), HasSubstr("acks=1"));
  o.producer.properties.erase("acks");
  o.producer.transactional_id = "t";
  o.producer.properties["transaction.timeout.ms"] = "1000";
  o.max_batch_time = std::chrono::milliseconds(1000);
  EXPECT_THAT(Validate(o).message(), HasSubstr("max_batch_time"));
  o.max_batch_time = std::chrono::milliseconds(100);
  o.checkpoint_topic = "bad topic";
  EXPECT_THAT(Validate(o).message(), HasSubstr("checkpoint_topic"));
  o.checkpoint_topic = "ok";
  o.max_records = 0;
  EXPECT_THAT(Validate(o).message(), HasSubstr("max_records"));
  o.max_records = 1;
  o.sync = SyncPolicy::kInterval;
  o.sync_interval = std::chrono::milliseconds(0);
  EXPECT_THAT(Validate(o).message(), HasSubstr("sync_interval"));
  auto spool = SpooledProducer::Create(o);
  EXPECT_EQ(spool.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SpooledProducerTest, BadRecordsAreRefusedAtSend) {
  const std::string topic = NewTopic("spool-bad", 1);
  SpoolOptions o =
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
  o.producer.properties["message.max.bytes"] = "1000";
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_EQ((*spool)->Send({.topic = "", .value = "x"}).code(),
            absl::StatusCode::kInvalidArgument);
  const std::string big(2000, 'b');
  EXPECT_EQ((*spool)->Send({.topic = topic, .value = big}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*spool)->metrics().appended, 0u);
  // A second producer on the same directory is refused.
  auto again = SpooledProducer::Create(o);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition)
      << again.status();
  ASSERT_TRUE((*spool)->Close().ok());
  EXPECT_EQ((*spool)->Send({.topic = topic, .value = "x"}).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace exactly::testing
