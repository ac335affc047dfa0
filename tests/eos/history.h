// What a workload did, as the checker needs to know it: every transaction
// attempt it made, the records each attempt sent, and what the client said
// became of the attempt.
//
// A record's value names its attempt, so that a reader can tell every record
// apart without the writer's help:
//   eos|<writer>|<txn>|<attempt>|<index>|<count>
// (writer: which producer; txn: the writer's transaction number; attempt:
// the how-manieth run of that transaction; index: 0..count-1 within the
// attempt).
#ifndef EXACTLY_TESTS_EOS_HISTORY_H_
#define EXACTLY_TESTS_EOS_HISTORY_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/string_view.h"

namespace exactly::eos {

struct AttemptId {
  std::string writer;
  int64_t txn = 0;
  int32_t attempt = 0;
  auto operator<=>(const AttemptId&) const = default;
};

struct RecordId {
  AttemptId attempt;
  int32_t index = 0;
  int32_t count = 0;  // records in the attempt
  auto operator<=>(const RecordId&) const = default;
};

std::string EncodeValue(const RecordId& id);
// nullopt for a value that is not a checker record.
std::optional<RecordId> DecodeValue(absl::string_view value);
std::string ToString(const AttemptId& id);

// What the client reported of an attempt.
enum class Outcome {
  kOpen,       // not finished yet (a workload that stops leaves none)
  kCommitted,  // commit returned OK
  kAborted,    // abort returned OK, or Transact aborted it to run again
  kUnknown,    // the client could not say (a commit cut short, a crash)
};
absl::string_view OutcomeName(Outcome outcome);

struct Attempt {
  Outcome outcome = Outcome::kOpen;
  int32_t sent = 0;  // records the client accepted (Send returned OK)
};

// Thread-safe: a workload's threads record into one history.
class History {
 public:
  // A new attempt; its records are then Sent() one by one.
  void Begin(const AttemptId& id);
  void Sent(const AttemptId& id);
  void Finish(const AttemptId& id, Outcome outcome);

  std::map<AttemptId, Attempt> attempts() const;

 private:
  mutable std::mutex mu_;
  std::map<AttemptId, Attempt> attempts_;
};

}  // namespace exactly::eos

#endif  // EXACTLY_TESTS_EOS_HISTORY_H_
