#include "txn/transaction_log.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/coordinator_placement.h"
#include "protocol/record_batch.h"
#include "protocol/serde.h"

namespace exactly::broker {

namespace {

// TransactionLogValue's fields, described once for both directions.
struct LogValue {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t timeout_ms = 0;
  int8_t state = 0;
  struct Partitions {
    std::string topic;
    std::vector<int32_t> indexes;
  };
  std::optional<std::vector<Partitions>> partitions;
  int64_t last_update_ms = -1;
  int64_t start_ms = -1;
  protocol::TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    io.Int64(producer_id);
    io.Int16(producer_epoch);
    io.Int32(timeout_ms);
    io.Int8(state);
    io.NullableArray(partitions, [&](Partitions& p) {
      io.String(p.topic);
      io.Array(p.indexes, [&](int32_t& i) { io.Int32(i); });
      io.TaggedFields(tagged_fields);
    });
    io.Int64(last_update_ms);
    io.Int64(start_ms);
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace

std::string EncodeTransactionLogKey(std::string_view transactional_id) {
  std::string out;
  protocol::Encoder e(&out, 0, false);
  e.Int16(0);
  e.String(std::string(transactional_id));
  return out;
}

std::string EncodeTransactionLogValue(const TxnMetadata& m) {
  LogValue v{.producer_id = m.producer_id,
             .producer_epoch = m.producer_epoch,
             .timeout_ms = m.timeout_ms,
             .state = static_cast<int8_t>(m.state),
             .last_update_ms = m.last_update_ms,
             .start_ms = m.start_ms};
  // Kafka writes the partitions of Empty and Complete* transactions as an
  // empty list.
  v.partitions.emplace();
  auto add = [&](const std::string& topic, int32_t index) {
    if (v.partitions->empty() || v.partitions->back().topic != topic)
      v.partitions->push_back({topic, {}});
    v.partitions->back().indexes.push_back(index);
  };
  for (const auto& [topic, index] : m.partitions) add(topic, index);
  std::set<int32_t> group_partitions;
  for (const std::string& group : m.groups)
    group_partitions.insert(CoordinatorPartition(group));
  for (int32_t index : group_partitions)
    add(std::string(kConsumerOffsetsTopic), index);
  std::string out;
  protocol::Encoder e(&out, 0, false);
  e.Int16(0);
  v.Serde(e);
  return out;
}

absl::StatusOr<std::string> DecodeTransactionLogKey(std::string_view key) {
  protocol::Decoder d(key, 0, false);
  int16_t version = -1;
  d.Int16(version);
  std::string id;
  d.String(id);
  if (!d.ok()) return d.status();
  if (version != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TransactionLogKey version ", version, " is unknown"));
  }
  return id;
}

absl::StatusOr<TxnMetadata> DecodeTransactionLogValue(
    std::string_view transactional_id, std::string_view value) {
  int16_t version = -1;
  {
    protocol::Decoder d(value, 0, false);
    d.Int16(version);
    if (!d.ok()) return d.status();
  }
  if (version != 0 && version != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("TransactionLogValue version ", version, " is unknown"));
  }
  protocol::Decoder d(value.substr(2), version, /*flexible=*/version >= 1);
  LogValue v;
  v.Serde(d);
  if (!d.ok()) return d.status();
  if (v.state < 0 ||
      v.state > static_cast<int8_t>(TxnState::kPrepareEpochFence))
    return absl::InvalidArgumentError(
        absl::StrCat("transaction state ", v.state, " is unknown"));
  TxnMetadata m;
  m.transactional_id = std::string(transactional_id);
  m.producer_id = v.producer_id;
  m.producer_epoch = v.producer_epoch;
  m.timeout_ms = v.timeout_ms;
  m.state = static_cast<TxnState>(v.state);
  m.last_update_ms = v.last_update_ms;
  m.start_ms = v.start_ms;
  if (v.partitions) {
    for (const LogValue::Partitions& p : *v.partitions)
      for (int32_t index : p.indexes) m.partitions.emplace(p.topic, index);
  }
  return m;
}

std::string BuildTransactionLogBatch(const TxnMetadata& m, int64_t now_ms) {
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = now_ms;
  absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(
      spec, {{.key = EncodeTransactionLogKey(m.transactional_id),
              .value = EncodeTransactionLogValue(m)}});
  // Only a codec can fail, and this batch is not compressed.
  return batch.ok() ? *std::move(batch) : std::string();
}

std::map<std::string, TxnMetadata> ReplayTransactionLog(const PartitionLog& log,
                                                        size_t* skipped) {
  std::map<std::string, TxnMetadata> state;
  size_t bad = 0;
  for (const StoredBatch& stored : log.batches()) {
    if (stored.header.is_control()) continue;
    absl::StatusOr<std::vector<protocol::Record>> records =
        protocol::DecodeRecords({stored.header, stored.bytes()});
    if (!records.ok()) {
      ++bad;
      continue;
    }
    for (const protocol::Record& r : *records) {
      if (!r.key) {
        ++bad;
        continue;
      }
      absl::StatusOr<std::string> id = DecodeTransactionLogKey(*r.key);
      if (!id.ok()) {
        ++bad;
        continue;
      }
      if (!r.value) {
        state.erase(*id);
        continue;
      }
      absl::StatusOr<TxnMetadata> m = DecodeTransactionLogValue(*id, *r.value);
      if (!m.ok()) {
        ++bad;
        continue;
      }
      state[*id] = *std::move(m);
    }
  }
  if (skipped != nullptr) *skipped = bad;
  return state;
}

}  // namespace exactly::broker
