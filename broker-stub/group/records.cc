#include "group/records.h"

#include "absl/strings/str_cat.h"
#include "protocol/serde.h"

namespace exactly::broker {

namespace {

constexpr int8_t kFormat = 0;

// One description of each record for both directions, as protocol messages
// have (see protocol/serde.h).
template <class Io>
void OffsetSerde(Io& io, OffsetRecord& r) {
  io.String(r.group);
  io.String(r.tp.first);
  io.Int32(r.tp.second);
  io.Int64(r.offset.offset);
  io.Int32(r.offset.leader_epoch);
  io.String(r.offset.metadata);
  io.Int64(r.offset.commit_timestamp_ms);
  int64_t seq = static_cast<int64_t>(r.offset.record_seq);
  io.Int64(seq);
  r.offset.record_seq = static_cast<uint64_t>(seq);
  io.Int64(r.producer_id);
  io.Int16(r.producer_epoch);
}

template <class Io>
void GroupSerde(Io& io, GroupRecord& r) {
  io.String(r.group_id);
  io.String(r.protocol_type);
  io.Int32(r.generation);
  io.NullableString(r.protocol_name);
  io.NullableString(r.leader);
  io.Array(r.members, [&](GroupRecord::Member& m) {
    io.String(m.id);
    io.NullableString(m.instance_id);
    io.String(m.client_id);
    io.String(m.client_host);
    io.Int32(m.rebalance_timeout_ms);
    io.Int32(m.session_timeout_ms);
    io.Bytes(m.metadata);
    io.Bytes(m.assignment);
  });
}

template <class R, class F>
std::string Encode(const R& record, F serde) {
  std::string out;
  protocol::Encoder e(&out, 0, false);
  int8_t format = kFormat;
  e.Int8(format);
  serde(e, const_cast<R&>(record));
  return out;
}

template <class R, class F>
absl::StatusOr<R> Decode(std::string_view bytes, F serde, const char* what) {
  protocol::Decoder d(bytes, 0, false);
  int8_t format = -1;
  d.Int8(format);
  R record;
  if (d.ok() && format != kFormat) {
    return absl::DataLossError(
        absl::StrCat("unknown ", what, " record format ", format));
  }
  serde(d, record);
  if (!d.ok() || d.remaining() != 0) {
    return absl::DataLossError(absl::StrCat(
        "bad ", what,
        " record: ", d.ok() ? "trailing bytes" : d.status().message()));
  }
  return record;
}

}  // namespace

std::string EncodeOffsetRecord(const OffsetRecord& record) {
  return Encode(record, [](auto& io, OffsetRecord& r) { OffsetSerde(io, r); });
}

absl::StatusOr<OffsetRecord> DecodeOffsetRecord(std::string_view bytes) {
  return Decode<OffsetRecord>(
      bytes, [](auto& io, OffsetRecord& r) { OffsetSerde(io, r); }, "offset");
}

std::string EncodeGroupRecord(const GroupRecord& record) {
  return Encode(record, [](auto& io, GroupRecord& r) { GroupSerde(io, r); });
}

absl::StatusOr<GroupRecord> DecodeGroupRecord(std::string_view bytes) {
  return Decode<GroupRecord>(
      bytes, [](auto& io, GroupRecord& r) { GroupSerde(io, r); }, "group");
}

}  // namespace exactly::broker
