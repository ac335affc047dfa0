// The spool's RocksDB store: identity and locking, sequences that are never
// reused, and damage that stays local: a flipped byte in the WAL or in an
// SST file costs the one record it hit, a full disk fails the write that
// hit it and nothing else.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/write_batch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "spool/block.h"
#include "spool/format.h"
#include "spool/store.h"
#include "storage/fault_injecting_file_system.h"
#include "support/temp_dir.h"
#include "unit/sdk/spool_files.h"

namespace exactly::internal::spool {
namespace {

using ::exactly::testing::FlipByteIn;
using ::exactly::testing::TempDir;

// A value that can be found in the files: "value-<seq>-" and padding.
std::string ValueOf(uint64_t seq, size_t size = 100) {
  std::string v = "value-" + std::to_string(seq) + "-";
  v.resize(size, 'p');
  return v;
}

// Appends records [first, first + n) as one group commit of one block.
absl::Status AppendGroup(SpoolStore& store, uint64_t first, uint64_t n,
                         size_t value_size = 100) {
  BlockBuilder block;
  for (uint64_t s = first; s < first + n; ++s) {
    block.Add({.topic = "t", .key = "k", .value = ValueOf(s, value_size)}, 1000,
              "c" + std::to_string(s));
  }
  const std::string_view value = block.Seal(first);
  return store.Append(
      {{first + n - 1, value}}, first + n,
      std::make_pair(first + n - 1, "c" + std::to_string(first + n - 1)),
      /*sync=*/true);
}

// Writes `fill`'s batch into a RocksDB database where a spool would be, as
// something other than this version's SpoolStore would have left it.
bool WritePlainDatabase(const TempDir& dir,
                        const std::function<void(rocksdb::WriteBatch&)>& fill) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::Open(options, dir.Sub("db"), &raw).ok()) return false;
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteBatch batch;
  fill(batch);
  return db->Write(rocksdb::WriteOptions(), &batch).ok();
}

struct Scanned {
  std::vector<uint64_t> good;
  std::vector<uint64_t> bad;
};

Scanned ScanAll(SpoolStore& store, uint64_t through) {
  Scanned out;
  absl::Status s =
      store.Scan(1, through, [&](uint64_t seq, std::string_view v) {
        (CheckRecord(v, seq) ? out.good : out.bad).push_back(seq);
        return true;
      });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last,
                            uint64_t except = 0) {
  std::vector<uint64_t> out;
  for (uint64_t s = first; s <= last; ++s) {
    if (s != except) out.push_back(s);
  }
  return out;
}

TEST(SpoolStoreTest, ANewSpoolGetsAnIdThatStays) {
  TempDir dir;
  std::string id;
  {
    StoreState state;
    auto store = SpoolStore::Open({.dir = dir.path()}, &state);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE(state.created);
    EXPECT_EQ(state.next_seq, 1u);
    EXPECT_EQ(state.spool_id.size(), 32u);
    id = state.spool_id;
  }
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_FALSE(state.created);
  EXPECT_EQ(state.spool_id, id);
}

TEST(SpoolStoreTest, SequencesAreNeverReusedEvenWhenEverythingWasDeleted) {
  TempDir dir;
  {
    StoreState state;
    auto store = SpoolStore::Open({.dir = dir.path()}, &state);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(AppendGroup(**store, 1, 5).ok());
    ASSERT_TRUE((*store)->DeleteCommitted(1, 5).ok());
  }
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(state.records, 0u);
  EXPECT_EQ(state.committed, 5u);
  EXPECT_EQ(state.next_seq, 6u);
  EXPECT_EQ(state.cursor, "c5");
  EXPECT_EQ(state.cursor_seq, 5u);
}

TEST(SpoolStoreTest, ReopeningCountsWhatIsHeld) {
  TempDir dir;
  {
    StoreState state;
    auto store = SpoolStore::Open({.dir = dir.path()}, &state);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(AppendGroup(**store, 1, 10).ok());
    ASSERT_TRUE((*store)->DeleteCommitted(1, 4).ok());
  }
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(state.records, 6u);
  EXPECT_EQ(state.first_seq, 5u);
  EXPECT_EQ(state.last_seq, 10u);
  EXPECT_GT(state.bytes, 600u);
  ASSERT_FALSE(state.ages.empty());
  EXPECT_EQ(state.ages.front().first, 5u);
  EXPECT_EQ(state.ages.front().second, 1000);
}

TEST(SpoolStoreTest, OneOwnerAtATime) {
  TempDir dir;
  StoreState state;
  auto first = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition)
      << second.status();
  // A read-only look (exactly-spool) takes no lock.
  StoreState look;
  auto reader = SpoolStore::Open({.dir = dir.path(), .read_only = true}, &look);
  EXPECT_TRUE(reader.ok()) << reader.status();
}

TEST(SpoolStoreTest, ADatabaseThatIsNotASpoolIsRefused) {
  TempDir dir;
  ASSERT_TRUE(WritePlainDatabase(
      dir, [](rocksdb::WriteBatch& batch) { batch.Put("users/1", "x"); }));
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
}

// A spool written with one key per record (format 1) is converted to
// blocks when opened: every record is kept, under its sequence, and a
// damaged one stays damaged.
TEST(SpoolStoreTest, AFormatOneSpoolIsConvertedAndKeepsEveryRecord) {
  TempDir dir;
  ASSERT_TRUE(WritePlainDatabase(dir, [](rocksdb::WriteBatch& batch) {
    batch.Put(kFormatKey, kFormatValueOneKeyPerRecord);
    batch.Put(kSpoolIdKey, "old-spool");
    batch.Put(kNextSeqKey, EncodeU64(6));
    batch.Put(kCommittedKey, EncodeU64(1));
    for (uint64_t seq = 1; seq <= 5; ++seq) {
      EncodedRecord r =
          EncodeRecord({.topic = "t", .value = ValueOf(seq)}, 1000, "");
      Seal(r, seq);
      if (seq == 4) r.stored[20] ^= 1;
      batch.Put(SeqKey(kRecordPrefix, seq), r.stored);
    }
  }));
  // A read-only look cannot convert it, and would not see its records.
  StoreState look;
  auto reader = SpoolStore::Open({.dir = dir.path(), .read_only = true}, &look);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(reader.status().message().find("format 1"), std::string::npos)
      << reader.status();
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(state.spool_id, "old-spool");
  EXPECT_EQ(state.next_seq, 6u);
  EXPECT_EQ(state.records, 4u);  // 2..5: 1 was committed
  ASSERT_EQ(state.events.size(), 1u);
  EXPECT_NE(state.events[0].find("converted"), std::string::npos);
  Scanned s = ScanAll(**store, 5);
  EXPECT_EQ(s.good, (std::vector<uint64_t>{2, 3, 5}));
  EXPECT_EQ(s.bad, std::vector<uint64_t>{4});
  // Opened again, it is a spool of blocks like any other.
  store->reset();
  StoreState again;
  store = SpoolStore::Open({.dir = dir.path()}, &again);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE(again.events.empty());
  EXPECT_EQ(ScanAll(**store, 5).good, (std::vector<uint64_t>{2, 3, 5}));
}

// One flipped byte in a WAL entry fails RocksDB's checksum for the whole
// group commit (ten records), and its reader drops the rest of the 32 KiB
// block too (the next group); the salvage puts those records back, and only
// the damaged one fails the spool's CRC.
TEST(SpoolStoreTest, AFlippedByteInTheWalCostsOnlyTheRecordItHit) {
  TempDir dir;
  {
    StoreState state;
    auto store = SpoolStore::Open({.dir = dir.path()}, &state);
    ASSERT_TRUE(store.ok());
    for (uint64_t g = 0; g < 3; ++g)
      ASSERT_TRUE(AppendGroup(**store, 1 + 10 * g, 10).ok());
  }
  ASSERT_EQ(FlipByteIn(dir.path(), ".log", ValueOf(15).substr(0, 20)), 1);
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_EQ(state.events.size(), 1u);
  EXPECT_NE(state.events[0].find("20 record(s) in them were put back"),
            std::string::npos)
      << state.events[0];
  EXPECT_EQ(state.next_seq, 31u);
  Scanned s = ScanAll(**store, 30);
  EXPECT_EQ(s.good, Range(1, 30, 15));
  EXPECT_EQ(s.bad, std::vector<uint64_t>{15});
  // Opening again (the damaged WAL is still there until the next flush)
  // changes nothing.
  store->reset();
  StoreState again;
  store = SpoolStore::Open({.dir = dir.path()}, &again);
  ASSERT_TRUE(store.ok()) << store.status();
  s = ScanAll(**store, 30);
  EXPECT_EQ(s.good, Range(1, 30, 15));
  EXPECT_EQ(s.bad, std::vector<uint64_t>{15});
}

// A group commit larger than a WAL block (32 KiB) is split into fragments;
// damage in one fragment fails the whole logical entry.
TEST(SpoolStoreTest, AFlippedByteInAFragmentedWalEntryCostsOnlyItsRecord) {
  TempDir dir;
  {
    StoreState state;
    auto store = SpoolStore::Open({.dir = dir.path()}, &state);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(AppendGroup(**store, 1, 100, 1000).ok());  // ~100 KiB
  }
  ASSERT_EQ(FlipByteIn(dir.path(), ".log", ValueOf(60, 1000).substr(0, 20)), 1);
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(store.ok()) << store.status();
  Scanned s = ScanAll(**store, 100);
  EXPECT_EQ(s.good, Range(1, 100, 60));
  EXPECT_EQ(s.bad, std::vector<uint64_t>{60});
}

// In an SST file (after a flush), reads skip RocksDB's block checksum: the
// spool's CRC finds the one damaged record, its neighbours in the same
// block still read.
TEST(SpoolStoreTest, AFlippedByteInAnSstFileCostsOnlyTheRecordItHit) {
  TempDir dir;
  {
    StoreState state;
    auto store = SpoolStore::Open({.dir = dir.path()}, &state);
    ASSERT_TRUE(store.ok());
    for (uint64_t g = 0; g < 5; ++g)
      ASSERT_TRUE(AppendGroup(**store, 1 + 20 * g, 20).ok());
    ASSERT_TRUE((*store)->db()->Flush(rocksdb::FlushOptions()).ok());
  }
  ASSERT_EQ(FlipByteIn(dir.path(), ".sst", ValueOf(42).substr(0, 20)), 1);
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(state.records, 100u);
  Scanned s = ScanAll(**store, 100);
  EXPECT_EQ(s.good, Range(1, 100, 42));
  EXPECT_EQ(s.bad, std::vector<uint64_t>{42});
}

TEST(SpoolStoreTest, ADiskFullFailsTheWriteThatHitItAndLosesNothingElse) {
  TempDir dir;
  auto fs = std::make_shared<broker::FaultInjectingFileSystem>(
      rocksdb::FileSystem::Default());
  std::unique_ptr<rocksdb::Env> env =
      broker::FaultInjectingFileSystem::NewEnv(fs);
  {
    StoreState state;
    auto store =
        SpoolStore::Open({.dir = dir.path(), .env = env.get()}, &state);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(AppendGroup(**store, 1, 10).ok());
    fs->SetNoSpace(true);
    absl::Status full = AppendGroup(**store, 11, 10);
    EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
    EXPECT_NE(full.message().find("No space"), std::string::npos) << full;
    fs->SetNoSpace(false);
    absl::Status resumed = (*store)->Resume();
    EXPECT_TRUE(resumed.ok()) << resumed;
    // The failed group's sequences were never used: they are handed out
    // again.
    ASSERT_TRUE(AppendGroup(**store, 11, 10).ok());
  }
  StoreState state;
  auto store = SpoolStore::Open({.dir = dir.path()}, &state);
  ASSERT_TRUE(store.ok()) << store.status();
  Scanned s = ScanAll(**store, 20);
  EXPECT_EQ(s.good, Range(1, 20));
  EXPECT_TRUE(s.bad.empty());
}

}  // namespace
}  // namespace exactly::internal::spool
