// RocksDB's CRC-32C replaced by the project's (storage/rocksdb_crc32c.h): this
// test binary links the replacement as the exactly-broker binary does, and
// checks that it is in effect, that it gives RocksDB's own values, and that a
// database written with either function reads back whole with the other.
#include "storage/rocksdb_crc32c.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "crc32c/crc32c.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "support/temp_dir.h"

namespace rocksdb::crc32c {
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
}  // namespace rocksdb::crc32c

namespace exactly::broker {
namespace {

using ::exactly::testing::TempDir;
using ExtendFn = uint32_t (*)(uint32_t, const char*, size_t);

constexpr char kSymbol[] = "_ZN7rocksdb6crc32c6ExtendEjPKcm";

// Puts the switch back whatever a test did.
class RocksDbCrc32cTest : public ::testing::Test {
 protected:
  ~RocksDbCrc32cTest() override { UseRocksDbOwnCrc32cForTest(false); }
};

TEST_F(RocksDbCrc32cTest, TheProcessResolvesRocksDbsCallsToTheReplacement) {
  // librocksdb calls Extend through its PLT, which the dynamic linker binds
  // to the first definition in the lookup order: this executable's, if it
  // exports one. RTLD_NEXT finds the library's own behind it.
  void* first = dlsym(RTLD_DEFAULT, kSymbol);
  void* library_own = dlsym(RTLD_NEXT, kSymbol);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(library_own, nullptr) << "librocksdb is not a shared library here";
  EXPECT_EQ(first, reinterpret_cast<void*>(&rocksdb::crc32c::Extend));
  EXPECT_NE(first, library_own);
  EXPECT_EQ(ActiveRocksDbCrc32c(), RocksDbCrc32c::kExactly)
      << "the replacement disagreed with librocksdb's own function";
}

TEST_F(RocksDbCrc32cTest, GivesTheValuesOfRocksDbsOwnFunction) {
  auto library_own = reinterpret_cast<ExtendFn>(dlsym(RTLD_NEXT, kSymbol));
  ASSERT_NE(library_own, nullptr);
  std::string bytes(100000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>((i * 131 + (i >> 7)) & 0xFF);
  }
  for (size_t n : {0, 1, 5, 100, 4095, 4096, 65537, 99990}) {
    for (size_t offset : {0, 3}) {
      const char* p = bytes.data() + offset;
      EXPECT_EQ(rocksdb::crc32c::Extend(0xABCDEF01u, p, n),
                library_own(0xABCDEF01u, p, n))
          << n << " bytes at offset " << offset;
    }
  }
  EXPECT_EQ(rocksdb::crc32c::Extend(0, "123456789", 9), 0xE3069283u);
}

TEST_F(RocksDbCrc32cTest, TheTestSwitchSendsCallsToRocksDbsOwn) {
  UseRocksDbOwnCrc32cForTest(true);
  EXPECT_EQ(ActiveRocksDbCrc32c(), RocksDbCrc32c::kRocksDbOwn);
  UseRocksDbOwnCrc32cForTest(false);
  EXPECT_EQ(ActiveRocksDbCrc32c(), RocksDbCrc32c::kExactly);
}

// Batch-sized values (blob files) and small ones (WAL, memtable, SSTs).
std::string Value(int i) {
  std::string v(i % 3 == 0 ? 40000 : 300, static_cast<char>('a' + i % 26));
  v.replace(0, 6, std::to_string(100000 + i));
  return v;
}

// Writes keys [from, to) and closes the store. Small memtables: the first
// keys are flushed to SSTs and blob files, the last stay in the WAL.
void Write(const std::string& dir, int from, int to) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open({.dir = dir, .memtable_bytes = 128 << 10});
  ASSERT_TRUE(store.ok()) << store.status();
  for (int i = from; i < to; ++i) {
    (*store)->Put(keys::Batch(1, 0, i), Value(i));
    if (i % 4 == 3) {
      ASSERT_TRUE((*store)->Commit().ok());
    }
  }
  ASSERT_TRUE((*store)->Commit().ok());
  ASSERT_TRUE((*store)->Sync().ok());
}

// Reopens the store (replaying its WAL) and reads every key back; RocksDB
// checks each WAL record's and each blob's checksum as it reads them.
void ExpectAll(const std::string& dir, int count) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.dir = dir});
  ASSERT_TRUE(store.ok()) << store.status();
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<std::string> got = (*store)->Get(keys::Batch(1, 0, i));
    ASSERT_TRUE(got.ok()) << "key " << i << ": " << got.status();
    ASSERT_EQ(*got, Value(i)) << "key " << i;
  }
}

TEST_F(RocksDbCrc32cTest, ADatabaseWrittenWithEitherReadsBackWithTheOther) {
  TempDir dir;
  Write(dir.path(), 0, 200);  // the replacement
  UseRocksDbOwnCrc32cForTest(true);
  ExpectAll(dir.path(), 200);
  Write(dir.path(), 200, 400);  // RocksDB's own
  UseRocksDbOwnCrc32cForTest(false);
  ExpectAll(dir.path(), 400);
}

}  // namespace
}  // namespace exactly::broker
