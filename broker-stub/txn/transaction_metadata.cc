#include "txn/transaction_metadata.h"

#include "absl/strings/str_cat.h"
#include "protocol/serde.h"

namespace exactly::broker {

std::string_view TxnStateName(TxnState state) {
  switch (state) {
    case TxnState::kEmpty:
      return "Empty";
    case TxnState::kOngoing:
      return "Ongoing";
    case TxnState::kPrepareCommit:
      return "PrepareCommit";
    case TxnState::kPrepareAbort:
      return "PrepareAbort";
    case TxnState::kCompleteCommit:
      return "CompleteCommit";
    case TxnState::kCompleteAbort:
      return "CompleteAbort";
    case TxnState::kDead:
      return "Dead";
    case TxnState::kPrepareEpochFence:
      return "PrepareEpochFence";
  }
  return "Unknown";
}

bool IsValidTransition(TxnState from, TxnState to) {
  using S = TxnState;
  auto from_any = [from](std::initializer_list<S> allowed) {
    for (S s : allowed) {
      if (s == from) return true;
    }
    return false;
  };
  switch (to) {
    case S::kEmpty:
      return from_any({S::kEmpty, S::kCompleteCommit, S::kCompleteAbort});
    case S::kOngoing:
      return from_any(
          {S::kEmpty, S::kOngoing, S::kCompleteCommit, S::kCompleteAbort});
    case S::kPrepareCommit:
      return from == S::kOngoing;
    case S::kPrepareAbort:
      return from_any({S::kOngoing, S::kPrepareEpochFence});
    case S::kCompleteCommit:
      return from == S::kPrepareCommit;
    case S::kCompleteAbort:
      return from == S::kPrepareAbort;
    case S::kDead:
      return from_any({S::kEmpty, S::kCompleteCommit, S::kCompleteAbort});
    case S::kPrepareEpochFence:
      return from == S::kOngoing;
  }
  return false;
}

std::string SerializeTxnMetadata(const TxnMetadata& m) {
  std::string out;
  protocol::Encoder e(&out, 0, false);
  e.Int8(0);  // format version
  e.Int64(m.producer_id);
  e.Int16(m.producer_epoch);
  e.Int16(m.last_producer_epoch);
  e.Int32(m.timeout_ms);
  e.Int8(static_cast<int8_t>(m.state));
  e.Int64(m.start_ms);
  e.Int64(m.last_update_ms);
  e.Int32(static_cast<int32_t>(m.partitions.size()));
  for (const auto& [topic, partition] : m.partitions) {
    e.String(topic);
    e.Int32(partition);
  }
  e.Int32(static_cast<int32_t>(m.groups.size()));
  for (const std::string& group : m.groups) e.String(group);
  return out;
}

absl::StatusOr<TxnMetadata> DeserializeTxnMetadata(
    std::string_view transactional_id, std::string_view bytes) {
  protocol::Decoder d(bytes, 0, false);
  TxnMetadata m;
  m.transactional_id = std::string(transactional_id);
  int8_t format = 0, state = 0;
  int32_t count = 0;
  d.Int8(format);
  d.Int64(m.producer_id);
  d.Int16(m.producer_epoch);
  d.Int16(m.last_producer_epoch);
  d.Int32(m.timeout_ms);
  d.Int8(state);
  d.Int64(m.start_ms);
  d.Int64(m.last_update_ms);
  d.Int32(count);
  for (int32_t i = 0; i < count && d.ok(); ++i) {
    std::string topic;
    int32_t partition = 0;
    d.String(topic);
    d.Int32(partition);
    m.partitions.emplace(std::move(topic), partition);
  }
  d.Int32(count);
  for (int32_t i = 0; i < count && d.ok(); ++i) {
    std::string group;
    d.String(group);
    m.groups.insert(std::move(group));
  }
  if (!d.ok()) return absl::DataLossError(d.status().message());
  if (format != 0 || state < 0 || state > 7) {
    return absl::DataLossError(absl::StrCat("transaction record of '",
                                            std::string(transactional_id),
                                            "': bad format"));
  }
  m.state = static_cast<TxnState>(state);
  return m;
}

}  // namespace exactly::broker
