#include "storage/store.h"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace exactly::broker {

namespace {

absl::Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return absl::OkStatus();
  std::string message = absl::StrCat(std::string(what), ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsBusy() || s.IsIOError()) return absl::UnavailableError(message);
  return absl::InternalError(message);
}

rocksdb::Slice ToSlice(std::string_view s) {
  return rocksdb::Slice(s.data(), s.size());
}

// Whether a file in `dir` can be opened with O_DIRECT and written one aligned
// block (tmpfs refuses the open; some file systems refuse the write).
bool TakesDirectWrites(const std::string& dir) {
  constexpr size_t kBlock = 4096;
  const std::string probe = dir + "/.direct-write-probe";
  int fd = ::open(probe.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT, 0600);
  if (fd < 0) return false;
  void* block = nullptr;
  bool ok = posix_memalign(&block, kBlock, kBlock) == 0;
  if (ok) {
    std::memset(block, 0, kBlock);
    ok = ::pwrite(fd, block, kBlock, 0) == static_cast<ssize_t>(kBlock);
  }
  std::free(block);
  ::close(fd);
  ::unlink(probe.c_str());
  return ok;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const Options& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(
        "cannot create data dir ", options.dir, ": ", ec.message()));
  }
  rocksdb::Options o;
  o.create_if_missing = true;
  if (options.env != nullptr) o.env = options.env;
  // The broker keeps its logs in memory and reads the database only at
  // start-up, so the database is tuned for writing: modest memtables, no
  // compression of already-compact batches.
  o.write_buffer_size = options.memtable_bytes;
  o.max_write_buffer_number = 3;
  o.compression = rocksdb::kNoCompression;
  o.max_open_files = 256;
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  // Record batches, the bulk of what is written, go to blob files when a
  // memtable is flushed and stay there: compaction then rewrites only keys
  // and the small values. With batches inside the SSTs, compacting the
  // partitions' interleaved batch keys wrote 1.59 GB for 0.65 GB flushed
  // (6 M records of 100 bytes on 3 partitions; the LOG's compaction events);
  // with blob files, next to nothing. No blob garbage collection: it
  // relocates the live blobs of the oldest files (it rewrote 0.70 GB in the
  // same run), and a log frees whole files anyway, as retention and topic
  // deletion drop its oldest batches. (A blob file whose batches are not all
  // gone, e.g. behind a compacted topic, stays on disk until they are.)
  // Each flush writes its own blob files, so they come out about a memtable
  // in size; blob_file_size only caps them.
  o.enable_blob_files = true;
  o.min_blob_size = 1024;
  o.blob_file_size = 64 << 20;
  // Flushes (blob files, SSTs) and compactions past the page cache: see
  // Options::direct_flush_writes. The WAL has no such option; its files are
  // deleted once flushed.
  o.use_direct_io_for_flush_and_compaction =
      options.direct_flush_writes && TakesDirectWrites(options.dir);
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, options.dir, &db);
  if (!s.ok())
    return FromRocks(s, absl::StrCat("opening the store in ", options.dir));
  std::unique_ptr<Store> store(new Store());
  store->db_.reset(db);
  store->staged_ = std::make_unique<rocksdb::WriteBatch>();
  return store;
}

Store::~Store() {
  if (db_) db_->Close().PermitUncheckedError();
}

void Store::Put(std::string_view key, std::string_view value) {
  staged_->Put(ToSlice(key), ToSlice(value)).PermitUncheckedError();
}

void Store::Delete(std::string_view key) {
  staged_->Delete(ToSlice(key)).PermitUncheckedError();
}

void Store::DeletePrefix(std::string_view prefix) {
  // Every key of this store is shorter than 64 KiB, so prefix + 0xff... bounds
  // the range.
  std::string end(prefix);
  end.append(std::string(65536, '\xff'));
  staged_->DeleteRange(ToSlice(prefix), ToSlice(end)).PermitUncheckedError();
}

bool Store::direct_flush_writes() const {
  return db_->GetDBOptions().use_direct_io_for_flush_and_compaction;
}

bool Store::HasStagedWrites() const { return staged_->Count() > 0; }

size_t Store::staged_bytes() const { return staged_->GetDataSize(); }

absl::Status Store::Commit() {
  if (staged_->Count() == 0) return absl::OkStatus();
  rocksdb::WriteOptions w;
  rocksdb::Status s = db_->Write(w, staged_.get());
  staged_->Clear();
  return FromRocks(s, "writing to the store");
}

absl::Status Store::Sync() {
  return FromRocks(db_->SyncWAL(), "syncing the store's WAL");
}

absl::StatusOr<std::string> Store::Get(std::string_view key) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), ToSlice(key), &value);
  if (!s.ok()) return FromRocks(s, "reading the store");
  return value;
}

absl::Status Store::ScanPrefix(
    std::string_view prefix,
    const std::function<absl::Status(std::string_view, std::string_view)>& fn)
    const {
  rocksdb::ReadOptions r;
  r.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(r));
  for (it->Seek(ToSlice(prefix)); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    std::string_view key(k.data(), k.size());
    if (key.substr(0, prefix.size()) != prefix) break;
    rocksdb::Slice v = it->value();
    absl::Status s = fn(key, std::string_view(v.data(), v.size()));
    if (!s.ok()) return s;
  }
  return FromRocks(it->status(), "scanning the store");
}

}  // namespace exactly::broker
