// Salvaging records from RocksDB write-ahead-log entries that fail RocksDB's
// own checksum.
//
// The spool writes each group commit as one RocksDB write batch, so one WAL
// entry holds many records. RocksDB checksums the entry as a whole: a single
// flipped byte fails the entire entry, and recovery (kSkipAnyCorruptedRecords)
// skips all of it, intact records included. Before RocksDB opens the spool,
// this reads the WAL files itself, finds the entries whose checksum fails,
// and parses the write batches inside as far as they parse. The spool then
// puts those records back and lets its own per-record CRC-32C decide: intact
// records are delivered, the damaged one is quarantined.
//
// Formats (stable since LevelDB): a WAL file is 32 KiB blocks of physical
// records, each `masked crc32c (4) | length (2) | type (1) | payload`, a
// logical record split over blocks as FIRST/MIDDLE/LAST; the payload is a
// WriteBatch: `sequence (8) | count (4)` then entries `tag | varint-prefixed
// key [| value]`.
#ifndef EXACTLY_SDK_SRC_SPOOL_WAL_SALVAGE_H_
#define EXACTLY_SDK_SRC_SPOOL_WAL_SALVAGE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace exactly::internal::spool {

struct SalvagedPut {
  std::string key;
  std::string value;
};

struct WalSalvage {
  // Put entries found in the WAL entries RocksDB skips.
  std::vector<SalvagedPut> puts;
  // WAL entries RocksDB's recovery skips (each may hold many records): the
  // ones whose checksum fails, and the ones after them in the same 32 KiB
  // block, which RocksDB's reader drops too.
  uint64_t corrupt_entries = 0;
  // Of those, entries whose write batch did not parse to the end: the
  // entries after the damage are lost (the spool reports the missing
  // sequences when it reaches them).
  uint64_t unparsed_entries = 0;
};

// Scans the WAL files (*.log) in `dir`. Never fails: unreadable files are
// skipped (RocksDB will say more when it opens them).
WalSalvage SalvageWal(const std::string& dir);

// One WAL file's bytes (exposed for tests).
void SalvageWalBytes(const std::string& data, WalSalvage& out);

}  // namespace exactly::internal::spool

#endif  // EXACTLY_SDK_SRC_SPOOL_WAL_SALVAGE_H_
