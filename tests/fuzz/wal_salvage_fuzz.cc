// One RocksDB WAL file's bytes through the salvage the spool runs before
// RocksDB opens it (SalvageWalBytes: what SalvageWal does with each *.log
// file it reads). The counts must stay consistent.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spool/wal_salvage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace exactly::internal::spool;
  const std::string wal(reinterpret_cast<const char*>(data), size);
  WalSalvage salvage;
  SalvageWalBytes(wal, salvage);
  if (salvage.unparsed_entries > salvage.corrupt_entries) std::abort();
  if (!salvage.puts.empty() && salvage.corrupt_entries == 0) std::abort();
  return 0;
}
