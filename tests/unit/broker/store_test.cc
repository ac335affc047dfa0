// What the store's blob files (storage/store.cc) promise: record batches are
// kept in blob files, come back whole after a reopen, and the files of
// batches a log deleted (retention, topic deletion) go away, without blob
// garbage collection; flushes write them past the page cache where the file
// system takes O_DIRECT, and through it where it does not.
#include "storage/store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

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

std::unique_ptr<Store> OpenStore(const std::string& dir, bool direct = true) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open({.dir = dir,
                   .memtable_bytes = kMemtableBytes,
                   .direct_flush_writes = direct});
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

// Pages of the directory's blob files, and how many of them are in the page
// cache (mincore).
struct CachedPages {
  size_t total = 0;
  size_t cached = 0;
};

CachedPages BlobPagesCached(const std::string& dir) {
  CachedPages pages;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".blob") continue;
    int fd = open(entry.path().c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << entry.path();
    if (fd < 0) continue;
    struct stat st {};
    fstat(fd, &st);
    const size_t size = static_cast<size_t>(st.st_size);
    if (size > 0) {
      void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
      EXPECT_NE(map, MAP_FAILED) << entry.path();
      if (map != MAP_FAILED) {
        std::vector<unsigned char> in_core((size + page - 1) / page);
        EXPECT_EQ(mincore(map, size, in_core.data()), 0);
        pages.total += in_core.size();
        for (unsigned char c : in_core) pages.cached += c & 1;
        munmap(map, size);
      }
    }
    close(fd);
  }
  return pages;
}

// 2 MiB of batches through 256 KiB memtables, then closed: blob files.
void WriteBatchesAndClose(std::unique_ptr<Store> store) {
  for (int64_t offset = 0; offset < 64; ++offset) {
    store->Put(keys::Batch(kTopicId, 0, offset), BatchValue(offset));
    ASSERT_TRUE(store->Commit().ok());
  }
}

// Reopens the store and reads back what WriteBatchesAndClose wrote.
void ExpectBatchesAfterReopen(const std::string& dir) {
  std::unique_ptr<Store> store = OpenStore(dir);
  ASSERT_NE(store, nullptr);
  for (int64_t offset = 0; offset < 64; ++offset) {
    absl::StatusOr<std::string> v =
        store->Get(keys::Batch(kTopicId, 0, offset));
    ASSERT_TRUE(v.ok()) << offset << ": " << v.status();
    EXPECT_EQ(*v, BatchValue(offset));
  }
}

TEST(StoreTest, FlushesWriteBlobFilesPastThePageCache) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.path());
  ASSERT_NE(store, nullptr);
  if (!store->direct_flush_writes()) {
    GTEST_SKIP() << "the file system of " << dir.path()
                 << " refuses O_DIRECT: the store writes through the page "
                    "cache there (Options::direct_flush_writes)";
  }
  WriteBatchesAndClose(std::move(store));
  const CachedPages pages = BlobPagesCached(dir.path());
  EXPECT_GE(pages.total, 32 * kBatchBytes / 4096);
  EXPECT_EQ(pages.cached, 0u) << "of " << pages.total << " pages";
  // And they read back (through the page cache, as at start-up).
  ExpectBatchesAfterReopen(dir.path());
}

// The control for the test above: the same writes, buffered, leave the blob
// files' pages in the page cache, so mincore does see them.
TEST(StoreTest, WithoutDirectWritesBlobFilesStayInThePageCache) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.path(), /*direct=*/false);
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->direct_flush_writes());
  WriteBatchesAndClose(std::move(store));
  const CachedPages pages = BlobPagesCached(dir.path());
  EXPECT_GE(pages.total, 32 * kBatchBytes / 4096);
  EXPECT_GT(pages.cached, pages.total / 2) << "of " << pages.total << " pages";
}

// tmpfs took no O_DIRECT before Linux 6.6 and takes it since: whichever this
// kernel does, the store agrees with it and its batches come back.
TEST(StoreTest, OnTmpfsFlushesUseODirectExactlyWhenTheKernelTakesIt) {
  struct statfs fs {};
  if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) {
    GTEST_SKIP() << "no tmpfs at /dev/shm";
  }
  char pattern[] = "/dev/shm/exactly-store-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string probe = dir + "/probe";
  const int fd = open(probe.c_str(), O_CREAT | O_WRONLY | O_DIRECT, 0600);
  const bool kernel_takes_it = fd >= 0;
  if (fd >= 0) close(fd);
  unlink(probe.c_str());
  {
    std::unique_ptr<Store> store = OpenStore(dir);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->direct_flush_writes(), kernel_takes_it);
    WriteBatchesAndClose(std::move(store));
  }
  EXPECT_GT(BlobFilesIn(dir).count, 0);
  ExpectBatchesAfterReopen(dir);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace exactly::broker
