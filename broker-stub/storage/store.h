// The broker's durable state: one RocksDB database per data directory.
//
// Everything the broker must remember across a restart (topics, record batches,
// producer states, transactions, group offsets) is a key in this database;
// docs/architecture.md lists the key layout (storage/keys.h). Writes made while
// the event loop handles one turn of requests are collected in one WriteBatch
// and committed together (group commit), so a log append and its producer-state
// update land atomically, and many appends share one write.
#ifndef EXACTLY_BROKER_STORAGE_STORE_H_
#define EXACTLY_BROKER_STORAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rocksdb {
class DB;
class Env;
class WriteBatch;
}  // namespace rocksdb

namespace exactly::broker {

class Store {
 public:
  struct Options {
    std::string dir;
    // A custom Env (the power-loss simulation wraps the file system); null for
    // the default.
    rocksdb::Env* env = nullptr;
    // How much a memtable holds before it is flushed (to an SST for keys and
    // small values, to a blob file for record batches). Tests make it small
    // to see flushes and files come and go sooner.
    size_t memtable_bytes = 16 << 20;
    // Whether flushes and compactions write their files with O_DIRECT, past
    // the page cache, where the directory's file system takes it (tmpfs does
    // not; Open() checks). The broker serves records from memory and reads
    // this database only at start-up, so cached copies of its blob files
    // would be a second copy of every record in memory; writing them cost
    // the --data-dir broker a third of its CPU, in the kernel's copy into
    // fresh page-cache pages (README, "Against Apache Kafka").
    bool direct_flush_writes = true;
  };

  static absl::StatusOr<std::unique_ptr<Store>> Open(const Options& options);
  ~Store();

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Staged writes, committed by the next Commit().
  void Put(std::string_view key, std::string_view value);
  void Delete(std::string_view key);
  void DeletePrefix(std::string_view prefix);
  bool HasStagedWrites() const;
  size_t staged_bytes() const;

  // Writes everything staged as one atomic batch. The write reaches the OS (it
  // survives the broker process being killed); Sync() makes it survive a power
  // loss.
  absl::Status Commit();
  // Forces the write-ahead log to stable storage (fsync).
  absl::Status Sync();

  // Whether flushes and compactions write with O_DIRECT (the option, where
  // the file system takes it).
  bool direct_flush_writes() const;

  // Reads, for loading state at start-up.
  absl::StatusOr<std::string> Get(
      std::string_view key) const;  // NotFound if absent
  absl::Status ScanPrefix(
      std::string_view prefix,
      const std::function<absl::Status(std::string_view key,
                                       std::string_view value)>& fn) const;

 private:
  Store() = default;
  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<rocksdb::WriteBatch> staged_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_STORAGE_STORE_H_
