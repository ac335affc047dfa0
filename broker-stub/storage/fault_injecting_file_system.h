// A RocksDB file system that can lose what was never synced, and can run out of
// space.
//
// Power loss: an OS keeps written data in its page cache until fsync; a power
// cut loses that. This wrapper remembers, per file, how many bytes had been
// synced; DropUnsyncedData() cuts every file back to that size, which is what
// the disk would hold after the cut. RocksDB then recovers from those files as
// it would after a real power loss.
//
// Disk full: SetNoSpace(true) makes every write and sync fail with RocksDB's
// NoSpace error. A failing disk: SetSyncsFail(true) makes syncs fail with an
// I/O error while writes still reach the page cache (what fsync's EIO means).
// A slow disk: HoldSyncs(true) makes syncs wait until HoldSyncs(false), and
// HoldWalAppends(true) does the same to appends to write-ahead logs (*.log),
// one at a time when LetOneWalAppendThrough() says so.
#ifndef EXACTLY_BROKER_STORAGE_FAULT_INJECTING_FILE_SYSTEM_H_
#define EXACTLY_BROKER_STORAGE_FAULT_INJECTING_FILE_SYSTEM_H_

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"

namespace exactly::broker {

class FaultInjectingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit FaultInjectingFileSystem(std::shared_ptr<rocksdb::FileSystem> base);
  const char* Name() const override { return "FaultInjectingFileSystem"; }

  // An Env using this file system, for rocksdb::Options::env.
  static std::unique_ptr<rocksdb::Env> NewEnv(
      std::shared_ptr<FaultInjectingFileSystem> fs);

  // The power goes off: from now on appends and syncs fail (nothing written
  // after the cut reaches the disk, and nobody may be told it did: a sync
  // that returned OK after the cut would let the broker acknowledge records
  // the power loss then takes back). A sync that began before the cut keeps
  // what it covered.
  void CutPower() { power_cut_.store(true); }
  // Cuts every file written through this file system back to what was synced
  // before the power went off, and turns the power back on. Call it with the
  // database closed.
  absl::Status DropUnsyncedData();

  void SetNoSpace(bool no_space) { no_space_.store(no_space); }
  bool no_space() const { return no_space_.load(); }
  void SetSyncsFail(bool fail) { syncs_fail_.store(fail); }
  void HoldSyncs(bool hold);
  void HoldWalAppends(bool hold);
  // While WAL appends are held: lets the next one (or the one waiting) go.
  void LetOneWalAppendThrough();
  // How many WAL appends are waiting now.
  int held_wal_appends();
  // Returns once `fname`'s append may go on (called by every append first).
  void WaitWhileAppendHeld(const std::string& fname);
  // Returns once syncs are not held (called by every sync first).
  void WaitWhileSyncsHeld();
  // The error a sync returns now, if any.
  rocksdb::IOStatus InjectedSyncError() const;

  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& fname, const rocksdb::FileOptions& opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& fname, const std::string& old_fname,
      const rocksdb::FileOptions& opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& fname,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src,
                               const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;

  // ---- Used by the file wrappers. ----
  void OnAppend(const std::string& fname, uint64_t bytes);
  // A positioned write (direct I/O) reached `end`; a truncation cut the file.
  void OnWriteUpTo(const std::string& fname, uint64_t end);
  void OnTruncate(const std::string& fname, uint64_t size);
  // The size a sync starting now will make durable.
  uint64_t SizeOf(const std::string& fname);
  // A sync that began when the file had `size` bytes returned OK.
  void OnSync(const std::string& fname, uint64_t size);
  bool power_cut() const { return power_cut_.load(); }

 private:
  struct FileState {
    uint64_t size = 0;
    uint64_t synced = 0;
  };
  rocksdb::IOStatus Wrap(const std::string& fname, rocksdb::IOStatus s,
                         uint64_t initial_size,
                         std::unique_ptr<rocksdb::FSWritableFile>* result);

  std::mutex mu_;
  std::map<std::string, FileState> files_;
  std::atomic<bool> no_space_{false};
  std::atomic<bool> syncs_fail_{false};
  std::atomic<bool> power_cut_{false};
  std::mutex hold_mu_;
  std::condition_variable hold_cv_;
  bool syncs_held_ = false;
  bool wal_appends_held_ = false;
  int wal_appends_let_through_ = 0;
  int wal_appends_waiting_ = 0;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_STORAGE_FAULT_INJECTING_FILE_SYSTEM_H_
