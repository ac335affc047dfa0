#include "eos/checker.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace exactly::eos {
namespace {

constexpr size_t kMaxViolationsInWords = 20;

void Note(CheckReport& report, std::string what) {
  if (report.violations.size() < kMaxViolationsInWords) {
    report.violations.push_back(std::move(what));
  }
}

}  // namespace

std::string CheckReport::Summary() const {
  std::string out = absl::StrCat(
      "attempts: ", attempts_committed, " committed, ", attempts_aborted,
      " aborted, ", attempts_unknown, " unknown (", unknown_seen,
      " of them visible); records: ", records_expected, " expected, ",
      records_read, " read; missing ", missing, ", duplicated ", duplicated,
      ", aborted and visible ", aborted_visible, ", partial attempts ",
      partial_attempts, ", out of order ", out_of_order, ", foreign ", foreign,
      ", partitions whose read_committed end stayed "
      "below the high watermark ",
      partitions_not_ended);
  if (!violations.empty()) {
    absl::StrAppend(&out, "\n  ", absl::StrJoin(violations, "\n  "));
  }
  return out;
}

CheckReport Check(const std::map<AttemptId, Attempt>& attempts,
                  const ReadResult& read) {
  CheckReport report;
  // How often each record was seen, and per attempt which indexes.
  std::map<RecordId, int> seen;
  std::map<AttemptId, std::set<int32_t>> seen_indexes;
  std::map<AttemptId, int32_t> seen_count_field;
  // Per (topic, partition, writer): the last record seen, for order.
  std::map<std::tuple<std::string, int32_t, std::string>,
           std::pair<RecordId, int64_t>>
      last_in_partition;

  for (const ReadRecord& r : read.records) {
    std::optional<RecordId> id = DecodeValue(r.value);
    if (!id.has_value() || !attempts.contains(id->attempt)) {
      ++report.foreign;
      Note(report,
           absl::StrCat("a record no attempt sent: ", r.topic, "[", r.partition,
                        "]@", r.offset, " \"", r.value, "\""));
      continue;
    }
    ++report.records_read;
    if (++seen[*id] > 1) {
      ++report.duplicated;
      Note(report, absl::StrCat("duplicated: record ", id->index, " of ",
                                ToString(id->attempt), " again at ", r.topic,
                                "[", r.partition, "]@", r.offset));
    }
    seen_indexes[id->attempt].insert(id->index);
    seen_count_field[id->attempt] = id->count;

    auto key = std::make_tuple(r.topic, r.partition, id->attempt.writer);
    auto it = last_in_partition.find(key);
    if (it != last_in_partition.end()) {
      const RecordId& before = it->second.first;
      if (std::tie(id->attempt.txn, id->attempt.attempt, id->index) <=
          std::tie(before.attempt.txn, before.attempt.attempt, before.index)) {
        ++report.out_of_order;
        Note(report, absl::StrCat("out of order in ", r.topic, "[", r.partition,
                                  "]: record ", id->index, " of ",
                                  ToString(id->attempt), " at offset ",
                                  r.offset, " after record ", before.index,
                                  " of ", ToString(before.attempt),
                                  " at offset ", it->second.second));
      }
    }
    last_in_partition[key] = {*id, r.offset};
  }

  for (const auto& [id, attempt] : attempts) {
    auto indexes = seen_indexes.find(id);
    const int32_t visible = indexes == seen_indexes.end()
                                ? 0
                                : static_cast<int32_t>(indexes->second.size());
    switch (attempt.outcome) {
      case Outcome::kCommitted:
        ++report.attempts_committed;
        report.records_expected += attempt.sent;
        if (visible < attempt.sent) {
          report.missing += attempt.sent - visible;
          Note(report, absl::StrCat("missing: ", attempt.sent - visible, " of ",
                                    attempt.sent, " records of committed ",
                                    ToString(id)));
        }
        break;
      case Outcome::kAborted:
        ++report.attempts_aborted;
        if (visible > 0) {
          report.aborted_visible += visible;
          Note(report, absl::StrCat("aborted and visible: ", visible,
                                    " records of aborted ", ToString(id)));
        }
        break;
      case Outcome::kOpen:
      case Outcome::kUnknown:
        ++report.attempts_unknown;
        if (visible > 0) ++report.unknown_seen;
        break;
    }
    // All or nothing, whatever the client said: a visible attempt shows
    // every record it was to hold.
    if (visible > 0) {
      const int32_t count = seen_count_field[id];
      if (visible < count) {
        ++report.partial_attempts;
        Note(report, absl::StrCat("partial: ", visible, " of ", count,
                                  " records of ", ToString(id), " (",
                                  OutcomeName(attempt.outcome), ")"));
      }
    }
  }

  for (const PartitionEnd& end : read.ends) {
    if (end.read_committed_end < end.high_watermark) {
      ++report.partitions_not_ended;
      Note(report,
           absl::StrCat("read_committed stopped at ", end.read_committed_end,
                        " in ", end.topic, "[", end.partition,
                        "], below the high watermark ", end.high_watermark,
                        ": a transaction was left open"));
    }
  }
  return report;
}

}  // namespace exactly::eos
