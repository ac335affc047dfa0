#include "eos/history.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace exactly::eos {

std::string EncodeValue(const RecordId& id) {
  return absl::StrCat("eos|", id.attempt.writer, "|", id.attempt.txn, "|",
                      id.attempt.attempt, "|", id.index, "|", id.count);
}

std::optional<RecordId> DecodeValue(absl::string_view value) {
  std::vector<absl::string_view> parts = absl::StrSplit(value, '|');
  if (parts.size() != 6 || parts[0] != "eos") return std::nullopt;
  RecordId id;
  id.attempt.writer = std::string(parts[1]);
  if (!absl::SimpleAtoi(parts[2], &id.attempt.txn) ||
      !absl::SimpleAtoi(parts[3], &id.attempt.attempt) ||
      !absl::SimpleAtoi(parts[4], &id.index) ||
      !absl::SimpleAtoi(parts[5], &id.count) || id.count <= 0 || id.index < 0 ||
      id.index >= id.count) {
    return std::nullopt;
  }
  return id;
}

std::string ToString(const AttemptId& id) {
  return absl::StrCat(id.writer, " txn ", id.txn, " attempt ", id.attempt);
}

absl::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOpen:
      return "open";
    case Outcome::kCommitted:
      return "committed";
    case Outcome::kAborted:
      return "aborted";
    case Outcome::kUnknown:
      return "unknown";
  }
  return "?";
}

void History::Begin(const AttemptId& id) {
  std::lock_guard<std::mutex> lock(mu_);
  attempts_[id] = Attempt{};
}

void History::Sent(const AttemptId& id) {
  std::lock_guard<std::mutex> lock(mu_);
  ++attempts_[id].sent;
}

void History::Finish(const AttemptId& id, Outcome outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  attempts_[id].outcome = outcome;
}

std::map<AttemptId, Attempt> History::attempts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return attempts_;
}

}  // namespace exactly::eos
