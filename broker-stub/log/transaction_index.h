// Per partition: the transactions still open on it, and the aborted ones. From
// these come the last stable offset (LSO) and the AbortedTransactions list of
// read_committed fetches.
#ifndef EXACTLY_BROKER_LOG_TRANSACTION_INDEX_H_
#define EXACTLY_BROKER_LOG_TRANSACTION_INDEX_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace exactly::broker {

struct AbortedTxn {
  int64_t producer_id = 0;
  int64_t first_offset = 0;
  int64_t last_offset = 0;  // the offset of its ABORT marker
  bool operator==(const AbortedTxn&) const = default;
};

class TransactionIndex {
 public:
  // A transactional batch from `producer_id` was appended at `base_offset`: the
  // producer's transaction on this partition starts there unless it is already
  // open.
  void OnTransactionalBatch(int64_t producer_id, int64_t base_offset);

  // A marker for `producer_id` was appended at `marker_offset`: its open
  // transaction (if any) ends; an aborted one is remembered.
  void OnMarker(int64_t producer_id, bool commit, int64_t marker_offset);

  // The first offset of the oldest open transaction.
  std::optional<int64_t> FirstUnstableOffset() const;

  // Whether `producer_id` has a transaction open on this partition.
  bool IsOpen(int64_t producer_id) const {
    return open_.count(producer_id) != 0;
  }

  // Aborted transactions overlapping [from, to): what a read_committed client
  // must be told about when it is sent the records in that range.
  std::vector<AbortedTxn> CollectAborted(int64_t from, int64_t to) const;

  // Forgets aborted transactions that ended below `log_start_offset`.
  void DeleteBefore(int64_t log_start_offset);

  const std::map<int64_t, int64_t>& open() const { return open_; }
  const std::vector<AbortedTxn>& aborted() const { return aborted_; }

 private:
  std::map<int64_t, int64_t> open_;            // producer id -> first offset
  std::multiset<int64_t> open_first_offsets_;  // for the minimum
  std::vector<AbortedTxn> aborted_;            // in marker (last offset) order
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_LOG_TRANSACTION_INDEX_H_
