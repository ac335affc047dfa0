#include "group/offsets_log.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "protocol/record_batch.h"
#include "protocol/serde.h"

namespace exactly::broker {

namespace {

constexpr int16_t kOffsetKeyVersion = 1;
constexpr int16_t kGroupKeyVersion = 2;
constexpr int16_t kOffsetValueVersion = 3;
constexpr int16_t kGroupValueVersion = 3;
constexpr int16_t kLastValueVersion = 4;
// Values are flexible from this version on.
constexpr int16_t kFirstFlexibleValueVersion = 4;

// OffsetCommitValue's fields, described once for both directions.
struct OffsetValue {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp = -1;
  int64_t expire_timestamp = -1;
  protocol::TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.Int64(offset);
    if (v >= 3) io.Int32(leader_epoch);
    io.String(metadata);
    io.Int64(commit_timestamp);
    if (v == 1) io.Int64(expire_timestamp);
    io.TaggedFields(tagged_fields);
  }
};

// GroupMetadataValue's fields.
struct GroupValue {
  std::string protocol_type;
  int32_t generation = 0;
  std::optional<std::string> protocol;
  std::optional<std::string> leader;
  int64_t current_state_timestamp = -1;
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::string client_id;
    std::string client_host;
    int32_t rebalance_timeout = 0;
    int32_t session_timeout = 0;
    std::string subscription;
    std::string assignment;
    protocol::TaggedFields tagged_fields;
  };
  std::vector<Member> members;
  protocol::TaggedFields tagged_fields;

  template <class Io>
  void Serde(Io& io) {
    const int16_t v = io.version();
    io.String(protocol_type);
    io.Int32(generation);
    io.NullableString(protocol);
    io.NullableString(leader);
    if (v >= 2) io.Int64(current_state_timestamp);
    io.Array(members, [&](Member& m) {
      io.String(m.member_id);
      if (v >= 3) io.NullableString(m.group_instance_id);
      io.String(m.client_id);
      io.String(m.client_host);
      if (v >= 1) io.Int32(m.rebalance_timeout);
      io.Int32(m.session_timeout);
      io.Bytes(m.subscription);
      io.Bytes(m.assignment);
      io.TaggedFields(m.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

// The int16 version every key and value starts with.
absl::StatusOr<int16_t> ReadVersion(std::string_view bytes) {
  protocol::Decoder d(bytes, 0, false);
  int16_t version = -1;
  d.Int16(version);
  if (!d.ok()) return d.status();
  return version;
}

// Decodes `bytes` after its version as `T` at `version`; trailing bytes are
// an error.
template <class T>
absl::StatusOr<T> DecodeVersioned(std::string_view bytes, int16_t version,
                                  std::string_view what) {
  protocol::Decoder d(bytes.substr(2), version,
                      /*flexible=*/version >= kFirstFlexibleValueVersion);
  T out;
  out.Serde(d);
  if (!d.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(what), " v", version, ": ", d.status().message()));
  }
  if (d.remaining() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(what), " v",
                                                   version, ": ", d.remaining(),
                                                   " trailing bytes"));
  }
  return out;
}

}  // namespace

std::string EncodeOffsetCommitKey(std::string_view group,
                                  std::string_view topic, int32_t partition) {
  std::string out;
  protocol::Encoder e(&out, 0, false);
  e.Int16(kOffsetKeyVersion);
  e.String(std::string(group));
  e.String(std::string(topic));
  e.Int32(partition);
  return out;
}

std::string EncodeGroupMetadataKey(std::string_view group) {
  std::string out;
  protocol::Encoder e(&out, 0, false);
  e.Int16(kGroupKeyVersion);
  e.String(std::string(group));
  return out;
}

absl::StatusOr<OffsetsLogKey> DecodeOffsetsLogKey(std::string_view key) {
  protocol::Decoder d(key, 0, false);
  int16_t version = -1;
  d.Int16(version);
  if (!d.ok()) return d.status();
  OffsetsLogKey out;
  if (version == 0 || version == 1) {
    out.kind = OffsetsLogKey::Kind::kOffset;
    d.String(out.group);
    d.String(out.tp.first);
    d.Int32(out.tp.second);
  } else if (version == kGroupKeyVersion) {
    out.kind = OffsetsLogKey::Kind::kGroup;
    d.String(out.group);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("__consumer_offsets key version ", version,
                     " is not an offset or group key"));
  }
  if (!d.ok()) return d.status();
  if (d.remaining() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("__consumer_offsets key version ", version, ": ",
                     d.remaining(), " trailing bytes"));
  }
  return out;
}

std::string EncodeOffsetCommitValue(const OffsetAndMetadata& o) {
  OffsetValue v{.offset = o.offset,
                .leader_epoch = o.leader_epoch,
                .metadata = o.metadata,
                .commit_timestamp = o.commit_timestamp_ms};
  std::string out;
  protocol::Encoder e(&out, kOffsetValueVersion, false);
  e.Int16(kOffsetValueVersion);
  v.Serde(e);
  return out;
}

absl::StatusOr<OffsetAndMetadata> DecodeOffsetCommitValue(
    std::string_view value) {
  absl::StatusOr<int16_t> version = ReadVersion(value);
  if (!version.ok()) return version.status();
  if (*version < 0 || *version > kLastValueVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("OffsetCommitValue version ", *version, " is unknown"));
  }
  absl::StatusOr<OffsetValue> v =
      DecodeVersioned<OffsetValue>(value, *version, "OffsetCommitValue");
  if (!v.ok()) return v.status();
  OffsetAndMetadata o;
  o.offset = v->offset;
  o.leader_epoch = v->leader_epoch;
  o.metadata = std::move(v->metadata);
  o.commit_timestamp_ms = v->commit_timestamp;
  return o;
}

std::string EncodeGroupMetadataValue(const GroupRecord& g, int64_t now_ms) {
  GroupValue v{.protocol_type = g.protocol_type,
               .generation = g.generation,
               .protocol = g.protocol_name,
               .leader = g.leader,
               .current_state_timestamp = now_ms};
  v.members.reserve(g.members.size());
  for (const GroupRecord::Member& m : g.members) {
    v.members.push_back({.member_id = m.id,
                         .group_instance_id = m.instance_id,
                         .client_id = m.client_id,
                         .client_host = m.client_host,
                         .rebalance_timeout = m.rebalance_timeout_ms,
                         .session_timeout = m.session_timeout_ms,
                         .subscription = m.metadata,
                         .assignment = m.assignment});
  }
  std::string out;
  protocol::Encoder e(&out, kGroupValueVersion, false);
  e.Int16(kGroupValueVersion);
  v.Serde(e);
  return out;
}

absl::StatusOr<GroupRecord> DecodeGroupMetadataValue(std::string_view group,
                                                     std::string_view value) {
  absl::StatusOr<int16_t> version = ReadVersion(value);
  if (!version.ok()) return version.status();
  if (*version < 0 || *version > kLastValueVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("GroupMetadataValue version ", *version, " is unknown"));
  }
  absl::StatusOr<GroupValue> v =
      DecodeVersioned<GroupValue>(value, *version, "GroupMetadataValue");
  if (!v.ok()) return v.status();
  GroupRecord g;
  g.group_id = std::string(group);
  g.protocol_type = std::move(v->protocol_type);
  g.generation = v->generation;
  g.protocol_name = std::move(v->protocol);
  g.leader = std::move(v->leader);
  g.members.reserve(v->members.size());
  for (GroupValue::Member& m : v->members) {
    g.members.push_back(
        {.id = std::move(m.member_id),
         .instance_id = std::move(m.group_instance_id),
         .client_id = std::move(m.client_id),
         .client_host = std::move(m.client_host),
         // Version 0 has no rebalance timeout: Kafka takes the session's.
         .rebalance_timeout_ms =
             *version == 0 ? m.session_timeout : m.rebalance_timeout,
         .session_timeout_ms = m.session_timeout,
         .metadata = std::move(m.subscription),
         .assignment = std::move(m.assignment)});
  }
  return g;
}

std::string BuildOffsetsLogBatch(const std::vector<OffsetsLogRecord>& records,
                                 int64_t now_ms, int64_t producer_id,
                                 int16_t producer_epoch) {
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = now_ms;
  // Kafka's coordinator passes 0, with or without a producer id.
  spec.base_sequence = 0;
  if (producer_id >= 0) {
    spec.attributes = protocol::kAttrTransactional;
    spec.producer_id = producer_id;
    spec.producer_epoch = producer_epoch;
  }
  std::vector<protocol::RecordSpec> specs;
  specs.reserve(records.size());
  for (const OffsetsLogRecord& r : records)
    specs.push_back({.key = r.key, .value = r.value});
  absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(spec, specs);
  // Only an empty batch or a codec can fail, and this batch is not
  // compressed.
  return batch.ok() ? *std::move(batch) : std::string();
}

std::map<std::string, LoadedGroup> ReplayOffsetsLog(const PartitionLog& log,
                                                    size_t* skipped) {
  std::map<std::string, LoadedGroup> groups;
  // The offsets of each producer's open transaction, by (group, partition),
  // until its marker.
  struct Staged {
    int16_t producer_epoch = -1;
    std::map<std::pair<std::string, TopicPartition>, OffsetAndMetadata> offsets;
  };
  std::map<int64_t, Staged> staged;
  // Hands a producer's staged offsets to their groups' GroupOffsets.
  auto stage = [&](int64_t producer_id, const Staged& txn) {
    std::set<std::string> touched;
    for (const auto& [key, offset] : txn.offsets) {
      groups[key.first].offsets.StageTxn(producer_id, txn.producer_epoch,
                                         key.second, offset);
      touched.insert(key.first);
    }
    return touched;
  };
  size_t bad = 0;
  for (const StoredBatch& stored : log.batches()) {
    const protocol::RecordBatchView view{stored.header, stored.bytes()};
    const int64_t producer_id = stored.header.producer_id;
    if (stored.header.is_control()) {
      // Emptied by the log cleaner: its transaction has left the log.
      if (stored.header.record_count == 0) continue;
      absl::StatusOr<protocol::ControlType> type =
          protocol::ReadControlType(view);
      if (!type.ok()) {
        ++bad;
        continue;
      }
      auto txn = staged.find(producer_id);
      if (txn == staged.end()) continue;
      if (*type == protocol::ControlType::kCommit) {
        for (const std::string& group : stage(producer_id, txn->second))
          groups[group].offsets.CompleteTxn(producer_id, /*commit=*/true);
      }
      staged.erase(txn);
      continue;
    }
    absl::StatusOr<std::vector<protocol::Record>> records =
        protocol::DecodeRecords(view);
    if (!records.ok()) {
      ++bad;
      continue;
    }
    const bool transactional =
        stored.header.is_transactional() && stored.header.has_producer_id();
    for (const protocol::Record& r : *records) {
      if (!r.key) {
        ++bad;
        continue;
      }
      absl::StatusOr<OffsetsLogKey> key = DecodeOffsetsLogKey(*r.key);
      if (!key.ok()) {
        ++bad;
        continue;
      }
      if (key->kind == OffsetsLogKey::Kind::kGroup) {
        // Group records take effect at once, transactional batch or not.
        if (!r.value) {
          auto it = groups.find(key->group);
          if (it != groups.end()) it->second.record.reset();
          continue;
        }
        absl::StatusOr<GroupRecord> g =
            DecodeGroupMetadataValue(key->group, *r.value);
        if (!g.ok()) {
          ++bad;
          continue;
        }
        groups[key->group].record = *std::move(g);
        continue;
      }
      std::pair<std::string, TopicPartition> where{key->group, key->tp};
      if (!r.value) {
        if (transactional) {
          auto txn = staged.find(producer_id);
          if (txn != staged.end()) txn->second.offsets.erase(where);
        } else {
          auto it = groups.find(key->group);
          if (it != groups.end()) it->second.offsets.Remove(key->tp);
        }
        continue;
      }
      absl::StatusOr<OffsetAndMetadata> offset =
          DecodeOffsetCommitValue(*r.value);
      if (!offset.ok()) {
        ++bad;
        continue;
      }
      offset->record_seq = static_cast<uint64_t>(r.offset) + 1;
      if (transactional) {
        Staged& txn = staged[producer_id];
        txn.producer_epoch = stored.header.producer_epoch;
        txn.offsets[std::move(where)] = *std::move(offset);
      } else {
        groups[key->group].offsets.Apply(key->tp, *offset);
      }
    }
  }
  for (const auto& [producer_id, txn] : staged) stage(producer_id, txn);
  for (auto it = groups.begin(); it != groups.end();) {
    if (!it->second.record && it->second.offsets.empty()) {
      it = groups.erase(it);
    } else {
      ++it;
    }
  }
  if (skipped != nullptr) *skipped = bad;
  return groups;
}

}  // namespace exactly::broker
