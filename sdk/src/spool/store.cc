#include "spool/store.h"

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "spool/block.h"
#include "spool/wal_salvage.h"

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer's dynamic annotations (libtsan; scripts/tsan.sh).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
#endif

namespace exactly::internal::spool {
namespace {

// db->Write. Under ThreadSanitizer, the memory accesses made inside it are not
// recorded: RocksDB (not instrumented) hands a writer's batch to the leader of
// its write group with atomics TSan cannot see, and the leader copies it with
// libstdc++'s string code, which is instrumented in our binary, so the copy
// looks like a race with the thread that built the batch. Locks still count,
// and the batch is built and freed outside, where accesses are recorded.
rocksdb::Status Write(rocksdb::DB& db, const rocksdb::WriteOptions& options,
                      rocksdb::WriteBatch* batch) {
#if defined(__SANITIZE_THREAD__)
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  rocksdb::Status s = db.Write(options, batch);
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  return s;
#else
  return db.Write(options, batch);
#endif
}

absl::Status FromRocksDb(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = absl::StrCat(
      absl::string_view(context.data(), context.size()), ": ", s.ToString());
  if (s.IsNoSpace() || s.subcode() == rocksdb::Status::kNoSpace) {
    return absl::ResourceExhaustedError(message);
  }
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsIOError() && (s.ToString().find("lock") != std::string::npos ||
                        s.ToString().find("LOCK") != std::string::npos)) {
    return absl::FailedPreconditionError(absl::StrCat(
        message,
        " (the spool is open in another process or another SpooledProducer: "
        "a spool has one owner at a time)"));
  }
  return absl::InternalError(message);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string RandomSpoolId() {
  std::random_device random;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 32; ++i) id.push_back(kHex[random() % 16]);
  return id;
}

rocksdb::Options SpoolOptions(const StoreOptions& o) {
  rocksdb::Options options;
  options.create_if_missing = o.create_if_missing;
  if (o.env != nullptr) options.env = o.env;
  options.wal_recovery_mode =
      rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
  options.avoid_flush_during_recovery = true;
  options.paranoid_checks = false;
  options.compression = rocksdb::kNoCompression;
  options.bottommost_compression = rocksdb::kNoCompression;
  // RocksDB's defaults, said out loud: a burst up to a memtable's worth is
  // drained (and deleted) before it is flushed, so it is never written to an
  // SST or compacted (with 32 MiB the spool benchmark's drain was ~7% slower).
  options.write_buffer_size = 64 << 20;
  options.max_write_buffer_number = 2;
  options.max_background_jobs = 2;
  options.max_open_files = 512;
  options.recycle_log_file_num = 0;
  options.keep_log_file_num = 3;
  options.max_log_file_size = 1 << 20;
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  rocksdb::BlockBasedTableOptions table;
  table.block_restart_interval = 1;
  // Debian's RocksDB computes CRC-32C without the CPU instruction; XXH3 is
  // fast in plain code, and reads skip the check anyway (see the header).
  table.checksum = rocksdb::kXXH3;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

rocksdb::ReadOptions ReadOpts() {
  rocksdb::ReadOptions r;
  r.verify_checksums = false;
  return r;
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace

SpoolStore::SpoolStore(std::string dir, std::unique_ptr<rocksdb::DB> db,
                       bool read_only)
    : dir_(std::move(dir)), db_(std::move(db)), read_only_(read_only) {}

SpoolStore::~SpoolStore() {
  if (db_ != nullptr) db_->Close().PermitUncheckedError();
}

absl::StatusOr<std::unique_ptr<SpoolStore>> SpoolStore::Open(
    const StoreOptions& o, StoreState* state) {
  *state = StoreState{};
  const std::string path = o.dir + "/db";
  const bool existed = Exists(path + "/CURRENT");
  if (!existed) {
    if (o.read_only || !o.create_if_missing) {
      return absl::NotFoundError(
          absl::StrCat("no spool in ", o.dir, " (", path, "/CURRENT missing)"));
    }
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) {
      return absl::InternalError(absl::StrCat(
          "cannot create the spool directory ", path, ": ", ec.message()));
    }
  }

  WalSalvage salvage;
  if (existed) salvage = SalvageWal(path);

  const rocksdb::Options options = SpoolOptions(o);
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = o.read_only
                          ? rocksdb::DB::OpenForReadOnly(options, path, &raw)
                          : rocksdb::DB::Open(options, path, &raw);
  if (s.IsCorruption() && !o.read_only) {
    // RocksDB's repair keeps every table and WAL it can read and moves the
    // rest to db/lost; the records missing afterwards are reported by the
    // drainer as it reaches them.
    state->events.push_back(absl::StrCat(
        "the spool database did not open (", s.ToString(),
        "); RocksDB repaired it, unreadable files are in ", path, "/lost"));
    rocksdb::Status repaired = rocksdb::RepairDB(path, options);
    s = repaired.ok() ? rocksdb::DB::Open(options, path, &raw) : repaired;
    if (s.IsCorruption()) {
      const std::string aside = absl::StrCat(o.dir, "/db.damaged-", NowMs());
      std::error_code ec;
      std::filesystem::rename(path, aside, ec);
      if (ec) {
        return absl::DataLossError(absl::StrCat(
            "the spool database in ", path,
            " is damaged beyond repair and could not be moved aside (",
            ec.message(), "): ", s.ToString()));
      }
      state->events.push_back(
          absl::StrCat("the spool database was damaged beyond repair (",
                       s.ToString(), "): moved to ", aside,
                       " and a new spool started; its records "
                       "cannot be delivered"));
      std::filesystem::create_directories(path, ec);
      s = rocksdb::DB::Open(options, path, &raw);
    }
  }
  if (!s.ok()) return FromRocksDb(s, absl::StrCat("open spool ", path));
  std::unique_ptr<SpoolStore> store(
      new SpoolStore(path, std::unique_ptr<rocksdb::DB>(raw), o.read_only));

  // Identity: a new database becomes a spool; a database of something else
  // is refused.
  std::string format;
  rocksdb::Status got = store->db_->Get(ReadOpts(), kFormatKey, &format);
  bool created = false;
  if (got.IsNotFound()) {
    std::unique_ptr<rocksdb::Iterator> it(store->db_->NewIterator(ReadOpts()));
    it->SeekToFirst();
    bool foreign = false;
    bool empty = !it->Valid();
    for (; it->Valid(); it->Next()) {
      const rocksdb::Slice k = it->key();
      if (!(k.size() == kSeqKeySize &&
            (k[0] == kBlockPrefix || k[0] == kRecordPrefix ||
             k[0] == kQuarantinePrefix)) &&
          !k.starts_with("m:")) {
        foreign = true;
        break;
      }
    }
    if (foreign) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " holds a RocksDB database that is not a spool"));
    }
    if (o.read_only) {
      return absl::NotFoundError(absl::StrCat("no spool in ", o.dir));
    }
    if (!empty) {
      state->events.push_back(
          "the spool's format marker was lost; the spool was re-marked");
    }
    rocksdb::WriteBatch batch;
    batch.Put(kFormatKey, kFormatValue);
    std::string id;
    if (store->db_->Get(ReadOpts(), kSpoolIdKey, &id).IsNotFound()) {
      batch.Put(kSpoolIdKey, RandomSpoolId());
      if (!empty) {
        state->events.push_back(
            "the spool id was lost; a new one was chosen (Kafka checkpoints "
            "of the old id no longer apply)");
      }
    }
    rocksdb::WriteOptions sync;
    sync.sync = true;
    if (rocksdb::Status w = Write(*store->db_, sync, &batch); !w.ok()) {
      return FromRocksDb(w, "initialise spool");
    }
    created = empty;
  } else if (!got.ok()) {
    return FromRocksDb(got, "read spool format");
  } else if (format == kFormatValueOneKeyPerRecord) {
    // Read-only, its records would not be seen (they are read as blocks).
    if (o.read_only) {
      return absl::FailedPreconditionError(absl::StrCat(
          path,
          " holds a spool of format 1 (a key per record): open it once "
          "with a SpooledProducer to convert it"));
    }
    if (absl::Status c = store->ConvertToBlocks(); !c.ok()) return c;
    state->events.push_back(
        "the spool was converted from format 1 (a key per record) to blocks");
  } else if (format != kFormatValue) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " holds a spool of an unknown format: ", format));
  }

  if (absl::Status l = store->Load(state, created, salvage); !l.ok()) {
    return l;
  }
  return store;
}

absl::Status SpoolStore::Load(StoreState* state, bool created,
                              const WalSalvage& salvage) {
  state->created = created;
  const rocksdb::ReadOptions r = ReadOpts();
  std::string v;
  if (db_->Get(r, kSpoolIdKey, &v).ok()) state->spool_id = v;
  auto get_u64 = [&](const char* key) -> uint64_t {
    std::string bytes;
    if (!db_->Get(r, key, &bytes).ok()) return 0;
    return DecodeU64(bytes).value_or(0);
  };
  state->committed = get_u64(kCommittedKey);
  state->sent = get_u64(kSentKey);
  uint64_t next_seq = std::max<uint64_t>(get_u64(kNextSeqKey), 1);
  next_seq = std::max(next_seq, state->committed + 1);
  next_seq = std::max(next_seq, state->sent + 1);
  state->next_quarantine = std::max<uint64_t>(get_u64(kNextQuarantineKey), 1);
  if (db_->Get(r, kCursorKey, &v).ok() && v.size() >= 8) {
    state->cursor_seq = DecodeU64(std::string_view(v).substr(0, 8)).value();
    state->cursor = v.substr(8);
  }

  // Quarantine.
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(r));
    const std::string start(1, kQuarantinePrefix);
    for (it->Seek(start); it->Valid() && it->key().starts_with(start);
         it->Next()) {
      std::optional<uint64_t> id =
          ParseSeqKey(kQuarantinePrefix,
                      std::string_view(it->key().data(), it->key().size()));
      if (!id.has_value()) continue;
      state->next_quarantine = std::max(state->next_quarantine, *id + 1);
      ++state->quarantine_entries;
      absl::StatusOr<QuarantineEntry> e = DecodeQuarantine(
          std::string_view(it->value().data(), it->value().size()));
      if (!e.ok()) {
        ++state->quarantined_records;
        continue;
      }
      state->quarantined_records += e->records;
      if (e->seq > 0) {
        next_seq = std::max(next_seq, e->seq + e->records);
        for (uint64_t s = e->seq;
             s < e->seq + e->records && s > state->committed; ++s) {
          state->quarantined_seqs.push_back(s);
          if (state->quarantined_seqs.size() > 1'000'000) break;
        }
      }
    }
  }

  // Records RocksDB skipped in damaged WAL entries go back in (unless they
  // were delivered or quarantined since); the drainer checks each one's CRC
  // when it reaches it.
  if (salvage.corrupt_entries > 0) {
    const std::set<uint64_t> quarantined(state->quarantined_seqs.begin(),
                                         state->quarantined_seqs.end());
    rocksdb::WriteBatch batch;
    uint64_t restored = 0;
    for (const SalvagedPut& put : salvage.puts) {
      // A block, or a record of a spool still in format 1 (one key each).
      std::optional<uint64_t> last = ParseSeqKey(kBlockPrefix, put.key);
      std::string key = put.key;
      std::string value = put.value;
      if (!last.has_value()) {
        last = ParseSeqKey(kRecordPrefix, put.key);
        if (!last.has_value() || quarantined.count(*last) > 0) continue;
        key = SeqKey(kBlockPrefix, *last);
        value = BlockOfStored(*last, put.value);
      }
      if (*last <= state->committed) continue;
      std::string existing;
      if (!db_->Get(r, key, &existing).IsNotFound()) continue;
      ForEachInBlock(value, *last, state->committed + 1,
                     [&](uint64_t seq, std::string_view stored) {
                       ++restored;
                       if (read_only_) {
                         state->salvageable.emplace_back(seq,
                                                         std::string(stored));
                       }
                       return true;
                     });
      if (!read_only_) batch.Put(key, value);
    }
    state->events.push_back(absl::StrCat(
        salvage.corrupt_entries,
        " WAL entr(ies) were skipped by RocksDB's recovery (a checksum "
        "failure, which also drops the rest of its 32 KiB block); ",
        restored,
        read_only_
            ? " record(s) in them would be put back on the next opening"
            : " record(s) in them were put back, to be checked one by one",
        salvage.unparsed_entries > 0
            ? absl::StrCat("; ", salvage.unparsed_entries,
                           " entr(ies) were damaged in their structure: "
                           "records after the damage are reported missing")
            : std::string()));
    if (restored > 0 && !read_only_) {
      rocksdb::WriteOptions sync;
      sync.sync = true;
      if (rocksdb::Status w = Write(*db_, sync, &batch); !w.ok()) {
        return FromRocksDb(w, "restore salvaged records");
      }
    }
  }

  // Records: the ones at or below the committed watermark are leftovers
  // (a salvaged block already delivered, a block the last commit ended in);
  // the rest are the spool, less what was quarantined.
  const std::set<uint64_t> quarantined(state->quarantined_seqs.begin(),
                                       state->quarantined_seqs.end());
  rocksdb::WriteBatch stale;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(r));
  const std::string prefix(1, kBlockPrefix);
  int64_t last_sampled_ms = -1;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    std::optional<uint64_t> last = ParseSeqKey(
        kBlockPrefix, std::string_view(it->key().data(), it->key().size()));
    if (!last.has_value()) continue;
    if (*last <= state->committed) {
      stale.Delete(it->key());
      continue;
    }
    next_seq = std::max(next_seq, *last + 1);
    ForEachInBlock(
        std::string_view(it->value().data(), it->value().size()), *last,
        state->committed + 1, [&](uint64_t seq, std::string_view value) {
          if (quarantined.count(seq) > 0) return true;
          ++state->records;
          state->bytes += value.size();
          if (state->first_seq == 0) state->first_seq = seq;
          state->last_seq = seq;
          // A damaged record may carry a wrong cursor or time: only checked
          // records count for those.
          if (!CheckRecord(value, seq)) return true;
          absl::StatusOr<DecodedRecord> d = DecodeRecord(value);
          if (!d.ok()) return true;
          if (!d->cursor.empty() && seq > state->cursor_seq) {
            state->cursor_seq = seq;
            state->cursor = std::string(d->cursor);
          }
          // Coalesce: one sample per 10 ms of append time is enough for an
          // age metric.
          if (last_sampled_ms < 0 || d->append_ms - last_sampled_ms >= 10) {
            state->ages.emplace_back(seq, d->append_ms);
            last_sampled_ms = d->append_ms;
          }
          return true;
        });
  }
  if (!it->status().ok()) {
    state->events.push_back(absl::StrCat(
        "reading the spool stopped early: ", it->status().ToString(),
        "; the drainer reports the records it cannot read"));
  }
  state->next_seq = next_seq;
  if (stale.Count() > 0 && !read_only_) {
    Write(*db_, rocksdb::WriteOptions(), &stale).PermitUncheckedError();
  }
  return absl::OkStatus();
}

absl::Status SpoolStore::ConvertToBlocks() {
  // One atomic, synced write: either the spool is still wholly format 1 (and
  // the next opening converts it), or wholly blocks.
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ReadOpts()));
  const std::string prefix(1, kRecordPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    std::optional<uint64_t> seq = ParseSeqKey(
        kRecordPrefix, std::string_view(it->key().data(), it->key().size()));
    if (!seq.has_value()) continue;
    batch.Put(SeqKey(kBlockPrefix, *seq),
              BlockOfStored(*seq, std::string_view(it->value().data(),
                                                   it->value().size())));
    batch.Delete(it->key());
  }
  if (!it->status().ok()) {
    return FromRocksDb(it->status(), "read a format-1 spool to convert it");
  }
  batch.Put(kFormatKey, kFormatValue);
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocksDb(Write(*db_, sync, &batch), "convert a format-1 spool");
}

absl::Status SpoolStore::Append(
    const std::vector<std::pair<uint64_t, std::string_view>>& blocks,
    uint64_t next_seq,
    const std::optional<std::pair<uint64_t, std::string>>& cursor, bool sync) {
  // Sized up front: growing a batch of megabytes copies it again and again.
  size_t bytes = 64 + (cursor.has_value() ? cursor->second.size() : 0);
  for (const auto& block : blocks) bytes += block.second.size() + 16;
  rocksdb::WriteBatch batch(bytes);
  for (const auto& [last_seq, value] : blocks) {
    batch.Put(SeqKey(kBlockPrefix, last_seq),
              rocksdb::Slice(value.data(), value.size()));
  }
  batch.Put(kNextSeqKey, EncodeU64(next_seq));
  if (cursor.has_value()) {
    batch.Put(kCursorKey, EncodeU64(cursor->first) + cursor->second);
  }
  rocksdb::WriteOptions w;
  w.sync = sync;
  return FromRocksDb(Write(*db_, w, &batch), "spool append");
}

absl::Status SpoolStore::SyncWal() {
  return FromRocksDb(db_->SyncWAL(), "spool sync");
}

absl::Status SpoolStore::Scan(
    uint64_t from, uint64_t to,
    const std::function<bool(uint64_t, std::string_view)>& fn) {
  if (from > to) return absl::OkStatus();
  rocksdb::ReadOptions r = ReadOpts();
  r.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(r));
  // The first block whose last sequence is >= from holds `from` (or the
  // first record after it).
  for (it->Seek(SeqKey(kBlockPrefix, from)); it->Valid(); it->Next()) {
    std::optional<uint64_t> last = ParseSeqKey(
        kBlockPrefix, std::string_view(it->key().data(), it->key().size()));
    if (!last.has_value()) break;  // past the blocks
    // Stopped (by fn, or past `to`), or the last block that can hold `to`.
    const bool went_on =
        ForEachInBlock(std::string_view(it->value().data(), it->value().size()),
                       *last, from, [&](uint64_t seq, std::string_view stored) {
                         return seq <= to && fn(seq, stored);
                       });
    if (!went_on || *last >= to) return absl::OkStatus();
  }
  return FromRocksDb(it->status(), "spool read");
}

absl::StatusOr<std::optional<std::string>> SpoolStore::Get(uint64_t seq) {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ReadOpts()));
  it->Seek(SeqKey(kBlockPrefix, seq));
  if (!it->status().ok()) return FromRocksDb(it->status(), "spool read");
  if (!it->Valid()) return std::optional<std::string>();
  std::optional<uint64_t> last = ParseSeqKey(
      kBlockPrefix, std::string_view(it->key().data(), it->key().size()));
  if (!last.has_value()) return std::optional<std::string>();
  std::optional<std::string> found;
  ForEachInBlock(std::string_view(it->value().data(), it->value().size()),
                 *last, seq, [&](uint64_t s, std::string_view stored) {
                   if (s == seq) found.emplace(stored);
                   return false;
                 });
  return found;
}

absl::Status SpoolStore::DeleteCommitted(uint64_t from, uint64_t through) {
  // One range tombstone per transaction rather than a point delete per
  // record: the delete then costs the same for 1 record as for 10,000.
  rocksdb::WriteBatch batch;
  batch.DeleteRange(SeqKey(kBlockPrefix, from),
                    SeqKey(kBlockPrefix, through + 1));
  batch.Put(kCommittedKey, EncodeU64(through));
  return FromRocksDb(Write(*db_, rocksdb::WriteOptions(), &batch),
                     "spool delete committed");
}

absl::Status SpoolStore::DeleteRecords(uint64_t from, uint64_t through) {
  rocksdb::WriteBatch batch;
  batch.DeleteRange(SeqKey(kBlockPrefix, from),
                    SeqKey(kBlockPrefix, through + 1));
  return FromRocksDb(Write(*db_, rocksdb::WriteOptions(), &batch),
                     "spool delete withdrawn");
}

void SpoolStore::DropCommittedFiles(uint64_t through) {
  const std::string begin(1, kBlockPrefix);
  const std::string end = SeqKey(kBlockPrefix, through);
  rocksdb::Slice b(begin), e(end);
  rocksdb::DeleteFilesInRange(db_.get(), db_->DefaultColumnFamily(), &b, &e)
      .PermitUncheckedError();
}

absl::Status SpoolStore::Quarantine(uint64_t quarantine_id,
                                    const QuarantineEntry& entry) {
  rocksdb::WriteBatch batch;
  batch.Put(SeqKey(kQuarantinePrefix, quarantine_id), EncodeQuarantine(entry));
  batch.Put(kNextQuarantineKey, EncodeU64(quarantine_id + 1));
  rocksdb::WriteOptions w;
  w.sync = true;
  return FromRocksDb(Write(*db_, w, &batch), "spool quarantine");
}

absl::Status SpoolStore::PutSent(uint64_t seq) {
  rocksdb::WriteBatch batch;  // db_->Put, through Write
  batch.Put(kSentKey, EncodeU64(seq));
  return FromRocksDb(Write(*db_, rocksdb::WriteOptions(), &batch),
                     "spool mark sent");
}

std::vector<std::pair<uint64_t, QuarantineEntry>> SpoolStore::ListQuarantine() {
  std::vector<std::pair<uint64_t, QuarantineEntry>> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ReadOpts()));
  const std::string start(1, kQuarantinePrefix);
  for (it->Seek(start); it->Valid() && it->key().starts_with(start);
       it->Next()) {
    std::optional<uint64_t> id =
        ParseSeqKey(kQuarantinePrefix,
                    std::string_view(it->key().data(), it->key().size()));
    if (!id.has_value()) continue;
    absl::StatusOr<QuarantineEntry> e = DecodeQuarantine(
        std::string_view(it->value().data(), it->value().size()));
    if (e.ok()) {
      out.emplace_back(*id, std::move(*e));
    } else {
      out.emplace_back(*id, QuarantineEntry{.reason = "unreadable entry"});
    }
  }
  return out;
}

uint64_t SpoolStore::DiskBytes() {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".log" || ext == ".sst") {
      total += entry.file_size(ec);
    }
  }
  return total;
}

absl::Status SpoolStore::Resume() {
  return FromRocksDb(db_->Resume(), "spool resume");
}

}  // namespace exactly::internal::spool
