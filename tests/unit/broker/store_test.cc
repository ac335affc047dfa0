// What the store's blob files (storage/store.cc) promise: record batches are
// kept in blob files, come back whole after a reopen, and the files of
// batches a log deleted (retention, topic deletion) go away, without blob
// garbage collection.
#include "storage/store.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "storage/keys.h"
#include "support/temp_dir.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::TempDir;

constexpr uint32_t kTopicId = 7;
constexpr size_t kBatchBytes = 32 << 10;
// Small memtables: a flush (and a blob file) every 8 batches.
constexpr size_t kMemtableBytes = 256 << 10;

std::string BatchValue(int64_t offset) {
  std::string v(kBatchBytes, static_cast<char>('a' + offset % 26));
  v.replace(0, 8, std::to_string(10000000 + offset));
  return v;
}

struct BlobFiles {
  int count = 0;
  uint64_t bytes = 0;
};

BlobFiles BlobFilesIn(const std::string& dir) {
  BlobFiles files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".blob") continue;
    ++files.count;
    files.bytes += entry.file_size();
  }
  return files;
}

std::unique_ptr<Store> OpenStore(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open({.dir = dir, .memtable_bytes = kMemtableBytes});
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(StoreTest, BatchesLiveInBlobFilesAndComeBackAfterAReopen) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = OpenStore(dir.path());
    ASSERT_NE(store, nullptr);
    for (int64_t offset = 0; offset < 64; ++offset) {
      store->Put(keys::Batch(kTopicId, 0, offset), BatchValue(offset));
      // A small value beside each batch, as a producer state is.
      store->Put(keys::Producer(kTopicId, 0, 1), std::to_string(offset));
      ASSERT_TRUE(store->Commit().ok());
    }
  }
  // 2 MiB of batches through 256 KiB memtables: flushed to blob files.
  const BlobFiles files = BlobFilesIn(dir.path());
  EXPECT_GT(files.count, 0);
  EXPECT_GE(files.bytes, 32 * kBatchBytes);

  std::unique_ptr<Store> store = OpenStore(dir.path());
  ASSERT_NE(store, nullptr);
  int64_t next = 0;
  ASSERT_TRUE(store
                  ->ScanPrefix(keys::PartitionPrefix('B', kTopicId, 0),
                               [&](std::string_view key,
                                   std::string_view value) -> absl::Status {
                                 EXPECT_EQ(key, keys::Batch(kTopicId, 0, next));
                                 EXPECT_EQ(value, BatchValue(next));
                                 ++next;
                                 return absl::OkStatus();
                               })
                  .ok());
  EXPECT_EQ(next, 64);
  absl::StatusOr<std::string> state =
      store->Get(keys::Producer(kTopicId, 0, 1));
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, "63");
}

TEST(StoreTest, DeletedBatchesFreeTheirBlobFiles) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.path());
  ASSERT_NE(store, nullptr);
  // A log that keeps its last 16 batches (512 KiB) while 25 MiB go through
  // it, as retention deletes the oldest batch for each new one.
  constexpr int64_t kBatches = 800;
  constexpr int64_t kKept = 16;
  for (int64_t offset = 0; offset < kBatches; ++offset) {
    store->Put(keys::Batch(kTopicId, 0, offset), BatchValue(offset));
    if (offset >= kKept)
      store->Delete(keys::Batch(kTopicId, 0, offset - kKept));
    ASSERT_TRUE(store->Commit().ok());
  }
  // What is left: the kept batches, the memtables not yet flushed, and the
  // files of the few flushes no compaction has gone over yet. Files of
  // deleted batches that stayed would add up to the 25 MiB written.
  const BlobFiles files = BlobFilesIn(dir.path());
  EXPECT_GT(files.count, 0);
  EXPECT_LT(files.bytes, uint64_t{6} << 20)
      << files.count << " blob files: the deleted batches' files stayed";
}

TEST(StoreTest, ADeletedTopicFreesItsBlobFiles) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.path());
  ASSERT_NE(store, nullptr);
  for (int64_t offset = 0; offset < 400; ++offset) {
    store->Put(keys::Batch(kTopicId, offset % 3, offset), BatchValue(offset));
    ASSERT_TRUE(store->Commit().ok());
  }
  // As topic deletion does: one range over the topic's batches.
  store->DeletePrefix(keys::TopicDataPrefix('B', kTopicId));
  ASSERT_TRUE(store->Commit().ok());
  // Another topic's log goes on (keeping its last 16 batches), so that
  // memtables flush and compactions run over the deleted range.
  for (int64_t offset = 0; offset < 400; ++offset) {
    store->Put(keys::Batch(kTopicId + 1, 0, offset), BatchValue(offset));
    if (offset >= 16) store->Delete(keys::Batch(kTopicId + 1, 0, offset - 16));
    ASSERT_TRUE(store->Commit().ok());
  }
  const BlobFiles files = BlobFilesIn(dir.path());
  EXPECT_LT(files.bytes, uint64_t{6} << 20)
      << files.count << " blob files: the deleted topic's files stayed";
  int left = 0;
  ASSERT_TRUE(store
                  ->ScanPrefix(keys::TopicDataPrefix('B', kTopicId),
                               [&](std::string_view, std::string_view) {
                                 ++left;
                                 return absl::OkStatus();
                               })
                  .ok());
  EXPECT_EQ(left, 0);
}

}  // namespace
}  // namespace exactly::broker
