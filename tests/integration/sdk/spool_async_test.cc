// SpooledProducer::SendAsync against the bundled broker: every admitted call
// completes exactly once, records whose completion said OK reach Kafka
// exactly once and in order, refusals never complete, a failed write or
// sync completes with its error and loses nothing else, and Flush waits for
// what is still on its way to the disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "spool_test_util.h"
#include "storage/fault_injecting_file_system.h"

namespace exactly::testing {
namespace {

using ::testing::HasSubstr;

// Completions, counted per call, with the values each call carried.
class Completions {
 public:
  // A callback for one SendAsync call carrying `values`.
  std::function<void(const absl::Status&)> For(
      std::vector<std::string> values) {
    return [this, values = std::move(values)](const absl::Status& s) {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_;
      if (s.ok()) {
        ok_.insert(values.begin(), values.end());
      } else {
        failed_.insert(values.begin(), values.end());
        last_error_ = s;
      }
    };
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::multiset<std::string> ok() const {
    std::lock_guard<std::mutex> lock(mu_);
    return ok_;
  }
  std::multiset<std::string> failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }
  absl::Status last_error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_;
  }

 private:
  mutable std::mutex mu_;
  int calls_ = 0;
  std::multiset<std::string> ok_, failed_;
  absl::Status last_error_;
};

class SpoolSendAsyncTest : public SpoolTest {
 protected:
  // A file system that can run out of space or hold syncs, and its Env.
  struct FaultyDisk {
    std::shared_ptr<broker::FaultInjectingFileSystem> fs =
        std::make_shared<broker::FaultInjectingFileSystem>(
            rocksdb::FileSystem::Default());
    std::unique_ptr<rocksdb::Env> env =
        broker::FaultInjectingFileSystem::NewEnv(fs);
  };
  SpoolOptions SpoolOnFaultyDisk(const FaultyDisk& disk) {
    SpoolOptions o =
        SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
    o.env = disk.env.get();
    return o;
  }

  // Sends values [first, last] in calls of `batch` records, keyed `key`;
  // every call must be admitted. Returns the number of calls.
  static int SendRange(SpooledProducer& spool, const std::string& topic,
                       const std::string& key, int first, int last, int batch,
                       Completions& done) {
    int calls = 0;
    for (int i = first; i <= last; i += batch) {
      std::vector<std::string> values;
      for (int j = i; j <= std::min(last, i + batch - 1); ++j) {
        values.push_back(Value(j));
      }
      std::vector<Record> records;
      for (const std::string& v : values) {
        records.push_back({.topic = topic, .key = key, .value = v});
      }
      absl::Status s = spool.SendAsync(records, done.For(values));
      EXPECT_TRUE(s.ok()) << s;
      ++calls;
    }
    return calls;
  }

  // Calls of about 1 MB: 4 records of 250 KB, values Value(4 * call + j)
  // followed by padding.
  static std::vector<std::string> MegabyteCall(int call) {
    std::vector<std::string> values;
    for (int j = 0; j < 4; ++j) {
      values.push_back(Value(4 * call + j) + std::string(250000, 'p'));
    }
    return values;
  }

  static absl::Status SendMegabyteCall(
      SpooledProducer& spool, const std::string& topic, int call,
      std::function<void(const absl::Status&)> done) {
    const std::vector<std::string> values = MegabyteCall(call);
    std::vector<Record> records;
    for (const std::string& v : values) {
      records.push_back({.topic = topic, .value = v});
    }
    return spool.SendAsync(records, std::move(done));
  }

  // The values without their padding.
  static std::multiset<std::string> Unpadded(
      const std::multiset<std::string>& values) {
    std::multiset<std::string> out;
    for (const std::string& v : values) out.insert(v.substr(0, 7));
    return out;
  }
};

TEST_F(SpoolSendAsyncTest, EveryCallCompletesOnceAndEveryRecordArrivesOnce) {
  const std::string topic = NewTopic("spool-async", 3);
  auto spool = SpooledProducer::Create(
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn")));
  ASSERT_TRUE(spool.ok()) << spool.status();
  Completions done;
  // One thread, many calls in flight: batches of 1..40 records.
  int calls = 0;
  int next = 0;
  for (int size = 1; next < 3000; size = size % 40 + 1) {
    const int last = std::min(2999, next + size - 1);
    calls += SendRange(**spool, topic, "k" + std::to_string(size % 3), next,
                       last, size, done);
    next = last + 1;
  }
  // Flush covers what is still on its way to the disk.
  absl::Status flushed = (*spool)->Flush(kPatience);
  ASSERT_TRUE(flushed.ok()) << flushed;
  EXPECT_EQ(done.calls(), calls);
  EXPECT_EQ(done.ok(), Expected(0, 2999));
  EXPECT_TRUE(done.failed().empty());
  const SpoolMetrics m = (*spool)->metrics();
  EXPECT_EQ(m.appended, 3000u);
  EXPECT_EQ(m.committed, 3000u);
  EXPECT_EQ(m.depth, 0u);
  ASSERT_TRUE((*spool)->Close().ok());
  const auto records = ReadCommittedAssigned(bootstrap(), topic, 3);
  EXPECT_EQ(ValuesOf(records), Expected(0, 2999));
  std::map<std::string, std::vector<std::string>> by_key;
  for (const SpooledRecord& r : records) by_key[r.key].push_back(r.value);
  for (const auto& [key, values] : by_key) {
    EXPECT_TRUE(std::is_sorted(values.begin(), values.end()))
        << "key " << key << " out of order";
  }
}

// Synchronous and asynchronous senders share the group commit: each kind
// may end up driving the other's writes and syncs.
TEST_F(SpoolSendAsyncTest, SendAndSendAsyncTogetherLoseNothing) {
  const std::string topic = NewTopic("spool-async-mixed", 2);
  auto spool = SpooledProducer::Create(
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn")));
  ASSERT_TRUE(spool.ok()) << spool.status();
  Completions done;
  std::atomic<int> async_calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "sync-" + std::to_string(t);
      for (int i = 0; i < 200; ++i) {
        absl::Status s = (*spool)->Send(
            {.topic = topic, .key = key, .value = Value(t * 200 + i)});
        ASSERT_TRUE(s.ok()) << s;
      }
    });
  }
  threads.emplace_back([&] {
    async_calls = SendRange(**spool, topic, "async", 400, 1999, 16, done);
  });
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  EXPECT_EQ(done.calls(), async_calls.load());
  EXPECT_EQ(done.ok(), Expected(400, 1999));
  ASSERT_TRUE((*spool)->Close().ok());
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 2)),
            Expected(0, 1999));
}

// The committer thread writes synchronous Sends too when they queued behind
// its write. If the asynchronous call that had it running completes during
// that write, the synchronous Sends must still be woken to be synced: they
// once slept forever (seen under TSan in CI). The WAL appends are held so
// that the steps happen in exactly that order.
TEST_F(SpoolSendAsyncTest, SyncSendsWrittenByTheCommitterAreSynced) {
  const std::string topic = NewTopic("spool-async-committer", 1);
  FaultyDisk disk;
  auto spool = SpooledProducer::Create(SpoolOnFaultyDisk(disk));
  ASSERT_TRUE(spool.ok()) << spool.status();
  const std::string first = Value(0), second = Value(1), third = Value(2);
  const Record async_record{.topic = topic, .value = first};
  const Record sync_record{.topic = topic, .value = second};
  const Record unsticking_record{.topic = topic, .value = third};

  // The committer writes the asynchronous call and is held in its append.
  disk.fs->HoldWalAppends(true);
  std::atomic<bool> async_done{false};
  ASSERT_TRUE((*spool)
                  ->SendAsync({&async_record, 1},
                              [&](const absl::Status& s) {
                                EXPECT_TRUE(s.ok()) << s;
                                async_done = true;
                              })
                  .ok());
  ASSERT_TRUE(Eventually([&] { return disk.fs->held_wal_appends() == 1; }));
  // A synchronous Send queues behind that write.
  std::future<absl::Status> sent = std::async(
      std::launch::async, [&] { return (*spool)->Send(sync_record); });
  ASSERT_TRUE(Eventually([&] { return (*spool)->metrics().depth == 2; }));
  // The write goes through; the committer, still running, writes the
  // synchronous Send (held again) while the asynchronous call is synced and
  // completes.
  disk.fs->LetOneWalAppendThrough();
  ASSERT_TRUE(Eventually(
      [&] { return async_done.load() && disk.fs->held_wal_appends() == 1; }));
  disk.fs->HoldWalAppends(false);

  const bool returned = sent.wait_for(kPatience) == std::future_status::ready;
  EXPECT_TRUE(returned) << "the synchronous Send was written, never synced";
  if (!returned) {
    // Another asynchronous call has the committer sync everything, so that
    // the test can end.
    (*spool)->SendAsync({&unsticking_record, 1}, nullptr).IgnoreError();
  }
  EXPECT_TRUE(sent.get().ok());
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  ASSERT_TRUE((*spool)->Close().ok());
  const std::multiset<std::string> values =
      ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1));
  EXPECT_EQ(values, returned ? Expected(0, 1) : Expected(0, 2));
}

TEST_F(SpoolSendAsyncTest, ARefusedCallNeverCompletes) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("spool-async-refused", 1);
  SpoolOptions o =
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
  o.max_records = 3;
  o.when_full = SpoolFullPolicy::kFail;
  BlockDrainer();  // the spool stays full
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  std::atomic<int> completed{0};
  auto count = [&](const absl::Status&) { ++completed; };
  const std::string value = "v";
  const Record good{.topic = topic, .value = value};
  const Record bad{.topic = "", .value = value};
  absl::Status s = (*spool)->SendAsync({&bad, 1}, count);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  const std::vector<Record> three(3, good);
  ASSERT_TRUE((*spool)->SendAsync(three, count).ok());
  s = (*spool)->SendAsync({&good, 1}, count);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("spool full"));
  // The admitted call completes; Close waits for it.
  (*spool)->Close().IgnoreError();
  EXPECT_EQ(completed.load(), 1);
  s = (*spool)->SendAsync({&good, 1}, count);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(completed.load(), 1);
  UnblockDrainer();
}

// A completion that throws is reported through on_error; the thread that ran
// it and the spool go on.
TEST_F(SpoolSendAsyncTest, AThrowingCompletionIsReportedAndTheSpoolGoesOn) {
  const std::string topic = NewTopic("spool-async-throw", 1);
  auto spool = SpooledProducer::Create(
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn")));
  ASSERT_TRUE(spool.ok()) << spool.status();
  const std::string first = Value(0), second = Value(1);
  const Record a{.topic = topic, .value = first};
  const Record b{.topic = topic, .value = second};
  ASSERT_TRUE((*spool)
                  ->SendAsync({&a, 1},
                              [](const absl::Status&) {
                                throw std::runtime_error("completion failed");
                              })
                  .ok());
  Completions done;
  ASSERT_TRUE((*spool)->SendAsync({&b, 1}, done.For({second})).ok());
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  EXPECT_EQ(done.ok(), Expected(1, 1));
  bool reported = false;
  for (const absl::Status& r : reports_.all()) {
    reported = reported || absl::StrContains(r.message(), "completion failed");
  }
  EXPECT_TRUE(reported);
  ASSERT_TRUE((*spool)->Close().ok());
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)),
            Expected(0, 1));
}

// A full disk fails the calls whose write hit it, through their
// completions; calls before and after are delivered, nothing twice.
TEST_F(SpoolSendAsyncTest, ADiskFullFailsTheCallsItHitAndLosesNothingElse) {
  const std::string topic = NewTopic("spool-async-enospc", 1);
  FaultyDisk disk;
  auto spool = SpooledProducer::Create(SpoolOnFaultyDisk(disk));
  ASSERT_TRUE(spool.ok()) << spool.status();
  Completions before, during, after;
  SendRange(**spool, topic, "k", 0, 99, 10, before);
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  disk.fs->SetNoSpace(true);
  const int failing = SendRange(**spool, topic, "k", 100, 149, 10, during);
  // Flush waits for their completions (the drain then has nothing new).
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  EXPECT_EQ(during.calls(), failing);
  EXPECT_TRUE(during.ok().empty());
  EXPECT_EQ(during.failed(), Expected(100, 149));
  EXPECT_EQ(during.last_error().code(), absl::StatusCode::kResourceExhausted)
      << during.last_error();
  EXPECT_THAT(during.last_error().message(), HasSubstr("not spooled"));
  disk.fs->SetNoSpace(false);
  SendRange(**spool, topic, "k", 150, 199, 10, after);
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  ASSERT_TRUE((*spool)->Close().ok());
  std::multiset<std::string> delivered = before.ok();
  const std::multiset<std::string> later = after.ok();
  delivered.insert(later.begin(), later.end());
  EXPECT_EQ(delivered.size(), 150u);
  EXPECT_EQ(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1)), delivered);
}

// SendAsync does not queue without bound: while the disk is slow, a caller
// that keeps sending waits once about 16 MiB of its calls are not yet
// durable, instead of holding up to max_bytes (1 GiB) in memory.
TEST_F(SpoolSendAsyncTest, AFastCallerWaitsWhileTooMuchIsOnItsWayToTheDisk) {
  const std::string topic = NewTopic("spool-async-bound", 1);
  FaultyDisk disk;
  auto spool = SpooledProducer::Create(SpoolOnFaultyDisk(disk));
  ASSERT_TRUE(spool.ok()) << spool.status();
  disk.fs->HoldSyncs(true);
  Completions done;
  constexpr int kCalls = 24;
  std::atomic<int> admitted{0};
  std::thread sender([&] {
    for (int c = 0; c < kCalls; ++c) {
      std::vector<std::string> values = MegabyteCall(c);
      absl::Status s = SendMegabyteCall(**spool, topic, c, done.For(values));
      EXPECT_TRUE(s.ok()) << s;
      admitted.fetch_add(1);
    }
  });
  ASSERT_TRUE(Eventually([&] { return admitted.load() >= 12; }));
  // Nothing can become durable now: the caller has stopped at the bound.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LE(admitted.load(), 17);
  EXPECT_EQ(done.calls(), 0);
  disk.fs->HoldSyncs(false);
  sender.join();
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  EXPECT_EQ(done.calls(), kCalls);
  EXPECT_EQ(Unpadded(done.ok()), Expected(0, 4 * kCalls - 1));
  ASSERT_TRUE((*spool)->Close().ok());
  EXPECT_EQ(Unpadded(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1))),
            Expected(0, 4 * kCalls - 1));
}

// A completion that sends again is not held back by the bound: it may run on
// the very thread that the memory waits for.
TEST_F(SpoolSendAsyncTest, ACompletionMaySendPastTheBound) {
  const std::string topic = NewTopic("spool-async-bound-chain", 1);
  FaultyDisk disk;
  auto spool = SpooledProducer::Create(SpoolOnFaultyDisk(disk));
  ASSERT_TRUE(spool.ok()) << spool.status();
  disk.fs->HoldSyncs(true);
  Completions done;
  constexpr int kFirst = 12, kChained = 6;
  // 12 calls (about 12 MB) wait for the disk; the first one's completion
  // sends 6 more, past 16 MiB, while the other 11 are not yet completed.
  auto first = done.For(MegabyteCall(0));
  ASSERT_TRUE(
      SendMegabyteCall(**spool, topic, 0, [&, first](const absl::Status& s) {
        first(s);
        for (int c = kFirst; c < kFirst + kChained; ++c) {
          absl::Status sent =
              SendMegabyteCall(**spool, topic, c, done.For(MegabyteCall(c)));
          EXPECT_TRUE(sent.ok()) << sent;
        }
      }).ok());
  for (int c = 1; c < kFirst; ++c) {
    ASSERT_TRUE(
        SendMegabyteCall(**spool, topic, c, done.For(MegabyteCall(c))).ok());
  }
  disk.fs->HoldSyncs(false);
  ASSERT_TRUE(Eventually([&] { return done.calls() == kFirst + kChained; }))
      << done.calls() << " calls completed";
  ASSERT_TRUE((*spool)->Flush(kPatience).ok());
  EXPECT_EQ(Unpadded(done.ok()), Expected(0, 4 * (kFirst + kChained) - 1));
  ASSERT_TRUE((*spool)->Close().ok());
  EXPECT_EQ(Unpadded(ValuesOf(ReadCommittedAssigned(bootstrap(), topic, 1))),
            Expected(0, 4 * (kFirst + kChained) - 1));
}

}  // namespace
}  // namespace exactly::testing
