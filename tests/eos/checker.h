// The checks, Jepsen-style: given what a workload did (History) and what an
// independent read_committed reader saw, list every way the two disagree
// with exactly-once delivery:
//   - a record of a committed attempt missing;
//   - a record seen more than once;
//   - a record of an aborted attempt visible;
//   - an attempt seen in part (transactions are all-or-nothing, across
//     partitions, whatever the client said of them);
//   - a writer's records out of order in a partition;
//   - a record no attempt sent;
//   - a partition whose read_committed end never reached its high watermark
//     (a transaction left hanging).
#ifndef EXACTLY_TESTS_EOS_CHECKER_H_
#define EXACTLY_TESTS_EOS_CHECKER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "eos/history.h"
#include "eos/reader.h"

namespace exactly::eos {

struct CheckReport {
  int64_t attempts_committed = 0;
  int64_t attempts_aborted = 0;
  int64_t attempts_unknown = 0;
  int64_t unknown_seen = 0;      // unknown attempts that turned out visible
  int64_t records_expected = 0;  // of committed attempts
  int64_t records_read = 0;      // checker records the reader saw
  int64_t missing = 0;           // of committed attempts
  int64_t duplicated = 0;        // extra copies
  int64_t aborted_visible = 0;   // records of aborted attempts
  int64_t partial_attempts = 0;  // attempts seen in part
  int64_t out_of_order = 0;      // records behind an earlier one
  int64_t foreign = 0;           // records no attempt sent
  int64_t partitions_not_ended = 0;
  std::vector<std::string> violations;  // the first few, in words

  bool ok() const {
    return missing == 0 && duplicated == 0 && aborted_visible == 0 &&
           partial_attempts == 0 && out_of_order == 0 && foreign == 0 &&
           partitions_not_ended == 0;
  }
  std::string Summary() const;
};

CheckReport Check(const std::map<AttemptId, Attempt>& attempts,
                  const ReadResult& read);

}  // namespace exactly::eos

#endif  // EXACTLY_TESTS_EOS_CHECKER_H_
