#include "storage/fault_injecting_file_system.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace exactly::broker {

namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

class TrackedFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  TrackedFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::string name,
              FaultInjectingFileSystem* fs)
      : FSWritableFileOwnerWrapper(std::move(file)),
        name_(std::move(name)),
        fs_(fs) {}

  IOStatus Append(const Slice& data, const IOOptions& o,
                  IODebugContext* d) override {
    if (IOStatus injected = BeforeWrite(); !injected.ok()) return injected;
    IOStatus s = FSWritableFileOwnerWrapper::Append(data, o, d);
    if (s.ok()) fs_->OnAppend(name_, data.size());
    return s;
  }
  IOStatus Append(const Slice& data, const IOOptions& o,
                  const rocksdb::DataVerificationInfo& v,
                  IODebugContext* d) override {
    if (IOStatus injected = BeforeWrite(); !injected.ok()) return injected;
    IOStatus s = FSWritableFileOwnerWrapper::Append(data, o, v, d);
    if (s.ok()) fs_->OnAppend(name_, data.size());
    return s;
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset,
                            const IOOptions& o, IODebugContext* d) override {
    if (IOStatus injected = BeforeWrite(); !injected.ok()) return injected;
    IOStatus s =
        FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, d);
    if (s.ok()) fs_->OnWriteUpTo(name_, offset + data.size());
    return s;
  }
  IOStatus Truncate(uint64_t size, const IOOptions& o,
                    IODebugContext* d) override {
    IOStatus s = FSWritableFileOwnerWrapper::Truncate(size, o, d);
    if (s.ok()) fs_->OnTruncate(name_, size);
    return s;
  }
  IOStatus Sync(const IOOptions& o, IODebugContext* d) override {
    fs_->WaitWhileSyncsHeld();
    if (IOStatus injected = fs_->InjectedSyncError(); !injected.ok())
      return injected;
    const uint64_t size = fs_->SizeOf(name_);
    IOStatus s = FSWritableFileOwnerWrapper::Sync(o, d);
    if (s.ok()) fs_->OnSync(name_, size);
    return s;
  }
  IOStatus Fsync(const IOOptions& o, IODebugContext* d) override {
    fs_->WaitWhileSyncsHeld();
    if (IOStatus injected = fs_->InjectedSyncError(); !injected.ok())
      return injected;
    const uint64_t size = fs_->SizeOf(name_);
    IOStatus s = FSWritableFileOwnerWrapper::Fsync(o, d);
    if (s.ok()) fs_->OnSync(name_, size);
    return s;
  }
  // A range sync only schedules write-back; it promises nothing, so it moves
  // nothing.

 private:
  // What every write meets first: an injected failure, or a hold on appends
  // to this file (which it waits out).
  IOStatus BeforeWrite() {
    if (fs_->power_cut())
      return IOStatus::IOError("injected: the power is off");
    if (fs_->no_space())
      return IOStatus::NoSpace("injected: no space left on device");
    fs_->WaitWhileAppendHeld(name_);
    return IOStatus::OK();
  }

  std::string name_;
  FaultInjectingFileSystem* fs_;
};

}  // namespace

FaultInjectingFileSystem::FaultInjectingFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base)
    : FileSystemWrapper(std::move(base)) {}

std::unique_ptr<rocksdb::Env> FaultInjectingFileSystem::NewEnv(
    std::shared_ptr<FaultInjectingFileSystem> fs) {
  return rocksdb::NewCompositeEnv(std::move(fs));
}

IOStatus FaultInjectingFileSystem::Wrap(
    const std::string& fname, IOStatus s, uint64_t initial_size,
    std::unique_ptr<rocksdb::FSWritableFile>* result) {
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    FileState& state = files_[fname];
    state.size = initial_size;
    state.synced = std::min(state.synced, initial_size);
  }
  *result = std::make_unique<TrackedFile>(std::move(*result), fname, this);
  return s;
}

IOStatus FaultInjectingFileSystem::NewWritableFile(
    const std::string& fname, const rocksdb::FileOptions& opts,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  if (no_space()) return IOStatus::NoSpace("injected: no space left on device");
  {
    // A new file starts empty; until synced, a power loss leaves it empty.
    std::lock_guard<std::mutex> lock(mu_);
    files_[fname] = FileState{};
  }
  return Wrap(fname, target()->NewWritableFile(fname, opts, result, dbg), 0,
              result);
}

IOStatus FaultInjectingFileSystem::ReopenWritableFile(
    const std::string& fname, const rocksdb::FileOptions& opts,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(fname, ec);
  if (ec) size = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!files_.count(fname)) files_[fname] = FileState{size, size};
  }
  return Wrap(fname, target()->ReopenWritableFile(fname, opts, result, dbg),
              size, result);
}

IOStatus FaultInjectingFileSystem::ReuseWritableFile(
    const std::string& fname, const std::string& old_fname,
    const rocksdb::FileOptions& opts,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    files_.erase(old_fname);
    files_[fname] = FileState{};
  }
  return Wrap(fname,
              target()->ReuseWritableFile(fname, old_fname, opts, result, dbg),
              0, result);
}

IOStatus FaultInjectingFileSystem::DeleteFile(const std::string& fname,
                                              const IOOptions& options,
                                              IODebugContext* dbg) {
  IOStatus s = target()->DeleteFile(fname, options, dbg);
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    files_.erase(fname);
  }
  return s;
}

IOStatus FaultInjectingFileSystem::RenameFile(const std::string& src,
                                              const std::string& target,
                                              const IOOptions& options,
                                              IODebugContext* dbg) {
  IOStatus s = this->target()->RenameFile(src, target, options, dbg);
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(src);
    if (it != files_.end()) {
      files_[target] = it->second;
      files_.erase(it);
    } else {
      files_.erase(target);
    }
  }
  return s;
}

void FaultInjectingFileSystem::OnAppend(const std::string& fname,
                                        uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  files_[fname].size += bytes;
}

void FaultInjectingFileSystem::OnWriteUpTo(const std::string& fname,
                                           uint64_t end) {
  std::lock_guard<std::mutex> lock(mu_);
  FileState& state = files_[fname];
  state.size = std::max(state.size, end);
}

void FaultInjectingFileSystem::OnTruncate(const std::string& fname,
                                          uint64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  FileState& state = files_[fname];
  state.size = size;
  state.synced = std::min(state.synced, size);
}

IOStatus FaultInjectingFileSystem::InjectedSyncError() const {
  if (power_cut_.load()) return IOStatus::IOError("injected: the power is off");
  if (no_space()) return IOStatus::NoSpace("injected: no space left on device");
  if (syncs_fail_.load())
    return IOStatus::IOError("injected: fsync failed (EIO)");
  return IOStatus::OK();
}

void FaultInjectingFileSystem::HoldSyncs(bool hold) {
  std::lock_guard<std::mutex> lock(hold_mu_);
  syncs_held_ = hold;
  hold_cv_.notify_all();
}

void FaultInjectingFileSystem::WaitWhileSyncsHeld() {
  std::unique_lock<std::mutex> lock(hold_mu_);
  hold_cv_.wait(lock, [&] { return !syncs_held_; });
}

void FaultInjectingFileSystem::HoldWalAppends(bool hold) {
  std::lock_guard<std::mutex> lock(hold_mu_);
  wal_appends_held_ = hold;
  wal_appends_let_through_ = 0;
  hold_cv_.notify_all();
}

void FaultInjectingFileSystem::LetOneWalAppendThrough() {
  std::lock_guard<std::mutex> lock(hold_mu_);
  ++wal_appends_let_through_;
  hold_cv_.notify_all();
}

int FaultInjectingFileSystem::held_wal_appends() {
  std::lock_guard<std::mutex> lock(hold_mu_);
  return wal_appends_waiting_;
}

void FaultInjectingFileSystem::WaitWhileAppendHeld(const std::string& fname) {
  if (!absl::EndsWith(fname, ".log")) return;  // RocksDB's WAL files
  std::unique_lock<std::mutex> lock(hold_mu_);
  ++wal_appends_waiting_;
  hold_cv_.wait(
      lock, [&] { return !wal_appends_held_ || wal_appends_let_through_ > 0; });
  if (wal_appends_held_) --wal_appends_let_through_;
  --wal_appends_waiting_;
}

uint64_t FaultInjectingFileSystem::SizeOf(const std::string& fname) {
  std::lock_guard<std::mutex> lock(mu_);
  return files_[fname].size;
}

void FaultInjectingFileSystem::OnSync(const std::string& fname, uint64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  FileState& state = files_[fname];
  state.synced = std::max(state.synced, std::min(size, state.size));
}

absl::Status FaultInjectingFileSystem::DropUnsyncedData() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, state] : files_) {
    std::error_code ec;
    if (!std::filesystem::exists(name, ec)) continue;
    uint64_t on_disk = std::filesystem::file_size(name, ec);
    if (ec)
      return absl::InternalError(
          absl::StrCat("power loss: stat ", name, ": ", ec.message()));
    if (on_disk > state.synced) {
      std::filesystem::resize_file(name, state.synced, ec);
      if (ec) {
        return absl::InternalError(
            absl::StrCat("power loss: truncate ", name, ": ", ec.message()));
      }
    }
    state.size = state.synced;
  }
  power_cut_.store(false);
  return absl::OkStatus();
}

}  // namespace exactly::broker
