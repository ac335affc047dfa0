// RocksDB's CRC-32C, computed by the project's own (common/crc32c).
//
// RocksDB checksums every record it writes to its write-ahead log and to its
// blob files with CRC-32C, through one exported function,
// rocksdb::crc32c::Extend. Debian's librocksdb is a portable build: its LOG
// says "Fast CRC32 supported: Not supported on x86", so that function runs a
// table byte by byte, and it was 36% of the --data-dir broker's CPU under a
// produce load (perf, README "Against Apache Kafka"). rocksdb_crc32c.cc
// defines the same function; linked into an executable, it takes the place of
// the library's for every call RocksDB makes through its PLT (ELF symbol
// interposition, as a malloc replacement does). It gives the same values with
// the SSE4.2 instruction.
//
// The replacement checks itself against RocksDB's own function before it is
// used (at the first call, on buffers of many lengths and alignments); if they
// ever differ, or RocksDB's cannot be found, every call goes to RocksDB's own.
// So a RocksDB whose Extend meant something else would be slower, never wrong.
//
// Linked into the exactly-broker binary (exactly_rocksdb_crc32c in
// broker-stub/CMakeLists.txt) and into its test. Not into libexactly_broker or
// the SDK: a library should not replace symbols in its user's process.
#ifndef EXACTLY_BROKER_STORAGE_ROCKSDB_CRC32C_H_
#define EXACTLY_BROKER_STORAGE_ROCKSDB_CRC32C_H_

#include <string_view>

namespace exactly::broker {

enum class RocksDbCrc32c {
  // The calls go to RocksDB's own function: it differed from ours, or the
  // test switch below asked for it.
  kRocksDbOwn,
  // The calls go to common/crc32c (the SSE4.2 instruction where the CPU has
  // it).
  kExactly,
};

// Which function RocksDB's CRC-32C calls reach in this process (decided at the
// first call; this makes it if none has been made yet).
RocksDbCrc32c ActiveRocksDbCrc32c();

// One line for the broker's start-up log.
std::string_view DescribeRocksDbCrc32c();

// Tests: send every call to RocksDB's own function (true) or back to the
// checked choice (false), so that a database written by one can be read by
// the other. Not meant to race with a running database.
void UseRocksDbOwnCrc32cForTest(bool own);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_STORAGE_ROCKSDB_CRC32C_H_
