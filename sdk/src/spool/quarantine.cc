// The quarantine: records the drainer cannot send (a failed CRC-32C check, a
// record that does not decode, sequences whose data is gone) are set aside
// in the store with the reason, reported through on_error, and skipped.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spool/impl.h"

namespace exactly {

namespace spool = internal::spool;
using spool::RangeHolding;
using spool::WallMs;

void SpooledProducer::Impl::QuarantineRecord(uint64_t seq,
                                             std::string_view stored,
                                             const std::string& reason) {
  spool::QuarantineEntry entry{.reason = reason,
                               .seq = seq,
                               .records = 1,
                               .quarantined_ms = WallMs(),
                               .bytes = std::string(stored)};
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_quarantine_++;
  }
  absl::Status s = store_->Quarantine(id, entry);
  {
    std::lock_guard<std::mutex> lock(mu_);
    quarantined_seqs_.insert(seq);
    ++quarantined_;
    depth_ -= std::min<uint64_t>(depth_, 1);
    bytes_ -= std::min<uint64_t>(bytes_, stored.size());
  }
  Report(absl::DataLossError(absl::StrCat(
      "spool ", options_.dir, ": record ", seq, " ", reason,
      s.ok() ? "; moved to the quarantine"
             : absl::StrCat("; could not be moved to the quarantine (",
                            s.message(), ")"),
      ", the drainer goes on")));
}

void SpooledProducer::Impl::QuarantineMissing(uint64_t first, uint64_t last,
                                              const std::string& why) {
  // Sequences quarantined before are not missing, nor are those of Sends
  // that failed after their write (withdrawn).
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t s = first;
    while (s <= last) {
      if (auto w = RangeHolding(withdrawn_, s); w != withdrawn_.end()) {
        s = w->second + 1;
        continue;
      }
      if (quarantined_seqs_.count(s) > 0) {
        ++s;
        continue;
      }
      // A run of missing records from s: up to the next sequence that is
      // quarantined or withdrawn.
      uint64_t stop = last + 1;
      if (auto q = quarantined_seqs_.lower_bound(s);
          q != quarantined_seqs_.end()) {
        stop = std::min(stop, *q);
      }
      if (auto w = withdrawn_.lower_bound(s); w != withdrawn_.end()) {
        stop = std::min(stop, w->first);
      }
      runs.emplace_back(s, stop - 1);
      s = stop;
    }
  }
  for (const auto& [a, b] : runs) {
    spool::QuarantineEntry entry{.reason = why,
                                 .seq = a,
                                 .records = b - a + 1,
                                 .quarantined_ms = WallMs()};
    uint64_t id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      id = next_quarantine_++;
    }
    absl::Status s = store_->Quarantine(id, entry);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (uint64_t q = a; q <= b && quarantined_seqs_.size() < 1'000'000;
           ++q) {
        quarantined_seqs_.insert(q);
      }
      quarantined_ += b - a + 1;
    }
    Report(absl::DataLossError(absl::StrCat(
        "spool ", options_.dir, ": ",
        a == b ? absl::StrCat("record ", a)
               : absl::StrCat(b - a + 1, " records ", a, "..", b),
        " missing (", why, ")", s.ok() ? "; noted in the quarantine" : "",
        ", the drainer goes on")));
  }
}

std::vector<QuarantinedRecord> SpooledProducer::Impl::Quarantined() const {
  std::vector<QuarantinedRecord> out;
  std::lock_guard<std::mutex> lock(mu_);
  if (store_ == nullptr) return out;
  for (auto& [id, e] : store_->ListQuarantine()) {
    out.push_back({.sequence = e.seq,
                   .records = e.records,
                   .reason = std::move(e.reason),
                   .bytes = std::move(e.bytes),
                   .quarantined_ms = e.quarantined_ms});
  }
  return out;
}

}  // namespace exactly
