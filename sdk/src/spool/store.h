// The spool's RocksDB database: opening it so that damage stays local,
// writing group commits, reading records in sequence order, deleting what
// Kafka has committed, and the quarantine.
//
// RocksDB settings that keep corruption local (docs/spool.md, "Integrity"):
//   - wal_recovery_mode = kSkipAnyCorruptedRecords: a damaged WAL entry is
//     skipped, the entries after it are still replayed (the default,
//     kPointInTimeRecovery, would drop the whole tail). Before opening, the
//     records in damaged entries are salvaged (wal_salvage.h) and put
//     back, so that the spool's own CRC decides about each one.
//   - avoid_flush_during_recovery: the old WAL files stay until the next
//     flush, so salvaging is repeated, not lost, if the process dies right
//     after opening.
//   - reads with verify_checksums = false, no compression and a restart
//     point at every key: a damaged byte in an SST data block fails one
//     record's CRC-32C instead of a whole 4 KiB block's RocksDB checksum.
//   - paranoid_checks = false: a compaction that meets a damaged block does
//     not put the database in read-only mode. Files whose records are all
//     committed are dropped without being read (DeleteFilesInRange).
#ifndef EXACTLY_SDK_SRC_SPOOL_STORE_H_
#define EXACTLY_SDK_SRC_SPOOL_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spool/format.h"
#include "spool/wal_salvage.h"

namespace rocksdb {
class DB;
class Env;
}  // namespace rocksdb

namespace exactly::internal::spool {

// The database lives in `dir`/db; a database that cannot be opened even after
// RocksDB's repair is moved aside to `dir`/db.damaged-<time> (and reported),
// so that a damaged spool never keeps the process from starting.
struct StoreOptions {
  std::string dir;
  rocksdb::Env* env = nullptr;  // nullptr: the default
  bool read_only = false;       // inspect/verify: no lock, no writes
  bool create_if_missing = true;
};

// What opening found.
struct StoreState {
  std::string spool_id;
  bool created = false;    // a new spool
  uint64_t next_seq = 1;   // sequences start at 1
  uint64_t committed = 0;  // last sequence known committed (0: none)
  uint64_t sent = 0;       // at-least-once: last sequence handed over
  // The last record with a cursor: its sequence and cursor.
  uint64_t cursor_seq = 0;
  std::string cursor;
  uint64_t next_quarantine = 1;
  // Records after `committed`: count, stored bytes, and (sequence, append
  // time) samples for the oldest-age metric, in sequence order.
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t first_seq = 0;  // 0: none
  uint64_t last_seq = 0;
  std::vector<std::pair<uint64_t, int64_t>> ages;
  // Quarantine: entries and the records they stand for.
  uint64_t quarantine_entries = 0;
  uint64_t quarantined_records = 0;
  // Sequences in the quarantine after `committed` (so that the drainer does
  // not report them again as missing).
  std::vector<uint64_t> quarantined_seqs;
  // What recovery did about damage, one line each, for the report.
  std::vector<std::string> events;
  // Read-only opening only: records in damaged WAL entries that a writable
  // opening would put back (sequence, stored value).
  std::vector<std::pair<uint64_t, std::string>> salvageable;
};

class SpoolStore {
 public:
  static absl::StatusOr<std::unique_ptr<SpoolStore>> Open(
      const StoreOptions& options, StoreState* state);
  ~SpoolStore();
  SpoolStore(const SpoolStore&) = delete;
  SpoolStore& operator=(const SpoolStore&) = delete;

  // One group commit: sealed blocks (last sequence, value; block.h) in
  // order, the next sequence, and the last cursor (if any record had one),
  // in one write batch; `sync` makes it durable before returning.
  absl::Status Append(
      const std::vector<std::pair<uint64_t, std::string_view>>& blocks,
      uint64_t next_seq,
      const std::optional<std::pair<uint64_t, std::string>>& cursor, bool sync);
  // Forces the WAL to stable storage.
  absl::Status SyncWal();

  // Calls fn(seq, stored value) for records with sequence in [from, to], in
  // order, until fn returns false. Keys that are not records are skipped. A
  // read error ends the scan early: the next call resumes after the last
  // record returned (the drainer then reports what it could not read).
  absl::Status Scan(uint64_t from, uint64_t to,
                    const std::function<bool(uint64_t, std::string_view)>& fn);
  // The stored value of `seq`, or nullopt if absent.
  absl::StatusOr<std::optional<std::string>> Get(uint64_t seq);

  // Deletes the records in [from, through] and records `through` as the
  // committed watermark. Not synced: Kafka's checkpoint is the truth, a lost
  // delete is redone after a restart.
  absl::Status DeleteCommitted(uint64_t from, uint64_t through);
  // Deletes the records in [from, through] (not synced): a group whose
  // sync failed, so that it is not sent.
  absl::Status DeleteRecords(uint64_t from, uint64_t through);
  // Drops SST files holding only records <= through, without reading them.
  void DropCommittedFiles(uint64_t through);
  // Adds a quarantine entry (synced). The records it names stay in their
  // block until the watermark passes them; the drainer skips them and
  // opening does not count them.
  absl::Status Quarantine(uint64_t quarantine_id, const QuarantineEntry& entry);
  // At-least-once mode: remembers the last sequence handed to the producer,
  // so that a sequence is not reused even if the records are lost.
  absl::Status PutSent(uint64_t seq);

  std::vector<std::pair<uint64_t, QuarantineEntry>> ListQuarantine();

  // Sizes of the live files: WAL and SST.
  uint64_t DiskBytes();

  // Clears a background error (e.g. after the disk had no space).
  absl::Status Resume();

  rocksdb::DB* db() { return db_.get(); }

 private:
  SpoolStore(std::string dir, std::unique_ptr<rocksdb::DB> db, bool read_only);
  absl::Status Load(StoreState* state, bool created, const WalSalvage& salvage);
  // Rewrites a spool of format 1 (a key per record) as one-record blocks.
  absl::Status ConvertToBlocks();

  const std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  const bool read_only_;
};

}  // namespace exactly::internal::spool

#endif  // EXACTLY_SDK_SRC_SPOOL_STORE_H_
