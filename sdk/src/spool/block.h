// Spool blocks: the records of one Send or SendBatch call, stored as one
// RocksDB value.
//
// Why: RocksDB's cost is per key (write-batch entry, memtable skip-list
// insert, SST entry, iterator step), and the group commit's write runs on one
// thread at a time. With a key per record that write capped the spool's
// append rate; with a key per call its cost is per call. Each record keeps its
// own CRC-32C bound to its sequence (format.h), so damage still costs
// only the records it hit.
//
// Key: 'b' + the block's LAST sequence (8 bytes BE). Keyed by the last so that
// "every block wholly at or below the watermark" is one key range (a single
// DeleteRange), and seeking to a sequence lands on the block that holds it.
//
// Value:
//   version      1 byte (1)
//   first_seq    8 bytes BE
//   records      repeated: length (4 bytes LE), then the stored record
//                (CRC + payload, as in format.h)
//
// Reading a damaged block: when the length fields tile the value exactly and
// agree with the key on the record count, every record is passed on under
// the sequence its position gives, and the caller's CRC check finds the
// damaged one. Otherwise (a length or the header was hit) records are found
// by their CRCs, which bind each one to its sequence; records that cannot be
// proven are left out, and the caller reports them missing.
#ifndef EXACTLY_SDK_SRC_SPOOL_BLOCK_H_
#define EXACTLY_SDK_SRC_SPOOL_BLOCK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "exactly/record.h"

namespace exactly::internal::spool {

inline constexpr char kBlockPrefix = 'b';

// Builds one block: records are encoded as they are added (by the Send
// calling thread), and bound to their sequences by Seal (by the group
// commit, which hands the sequences out).
class BlockBuilder {
 public:
  BlockBuilder();

  // Room for records of about `bytes` in all, so that adding them does not
  // copy the block again and again as it grows.
  void Reserve(size_t bytes) { value_.reserve(value_.size() + bytes); }
  void Add(const Record& record, int64_t append_ms, std::string_view cursor);

  size_t records() const { return payload_crcs_.size(); }
  // The stored size of the records (CRC + payload each), the spool's byte
  // count; the block adds a header and a length per record.
  uint64_t record_bytes() const { return record_bytes_; }

  // Gives the records sequences first_seq, first_seq + 1, ...: fills in the
  // header and every record's CRC. Returns the value to store, valid until
  // the builder changes.
  std::string_view Seal(uint64_t first_seq);

 private:
  std::string value_;
  std::vector<uint32_t> payload_crcs_;
  uint64_t record_bytes_ = 0;
};

// A block of one record already stored and sealed under `seq`, kept byte for
// byte (converting a spool of format 1, one key per record: a damaged record
// stays damaged).
std::string BlockOfStored(uint64_t seq, std::string_view stored);

// Calls fn(seq, stored) for the records of the block stored under
// `last_seq`, in sequence order, from sequence `from` on, until fn returns
// false. `stored` is the record's bytes as found: it may fail CheckRecord.
// Returns false if fn stopped the walk.
bool ForEachInBlock(std::string_view value, uint64_t last_seq, uint64_t from,
                    const std::function<bool(uint64_t, std::string_view)>& fn);

}  // namespace exactly::internal::spool

#endif  // EXACTLY_SDK_SRC_SPOOL_BLOCK_H_
