#include "protocol/serde.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace exactly::protocol {

// ---- Decoder ----

void Decoder::Fail(std::string_view what) {
  if (!status_.ok()) return;
  std::string subject = what.empty() ? "input" : std::string(what);
  status_ = absl::InvalidArgumentError(absl::StrCat(
      "malformed ", subject, " at byte ", pos_, " of ", data_.size()));
}

bool Decoder::Need(size_t n) {
  if (!ok()) return false;
  if (remaining() < n) {
    Fail(absl::StrCat("input: need ", n, " bytes, ", remaining(), " left"));
    return false;
  }
  return true;
}

void Decoder::UnsignedVarint(uint32_t& v) {
  uint32_t result = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (!Need(1)) return;
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 28 && (b & 0xf0) != 0) break;  // more than 32 bits
    result |= static_cast<uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      v = result;
      return;
    }
  }
  Fail("unsigned varint");
}

void Decoder::Varint(int32_t& v) {
  uint32_t raw = 0;
  UnsignedVarint(raw);
  v = static_cast<int32_t>((raw >> 1) ^ (~(raw & 1) + 1));
}

void Decoder::Varlong(int64_t& v) {
  uint64_t raw = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (!Need(1)) return;
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && (b & 0xfe) != 0) break;  // more than 64 bits
    raw |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      v = static_cast<int64_t>((raw >> 1) ^ (~(raw & 1) + 1));
      return;
    }
  }
  Fail("varlong");
}

int64_t Decoder::ReadLength(LengthKind kind) {
  if (flexible_ && kind != LengthKind::kLegacyString) {
    uint32_t n = 0;
    UnsignedVarint(n);
    return static_cast<int64_t>(n) - 1;
  }
  if (kind == LengthKind::kArrayOrBytes) {
    int32_t n = 0;
    Int32(n);
    return n < 0 ? -1 : n;
  }
  int16_t n = 0;
  Int16(n);
  return n < 0 ? -1 : n;
}

std::optional<std::string_view> Decoder::ReadSized(LengthKind kind) {
  int64_t n = ReadLength(kind);
  if (!ok() || n < 0) return std::nullopt;
  if (!Need(static_cast<size_t>(n))) return std::nullopt;
  std::string_view s = data_.substr(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return s;
}

void Decoder::NullableString(std::optional<std::string>& v) {
  std::optional<std::string_view> s = ReadSized(LengthKind::kString);
  if (s) {
    v.emplace(*s);
  } else {
    v.reset();
  }
}

void Decoder::LegacyNullableString(std::optional<std::string>& v) {
  std::optional<std::string_view> s = ReadSized(LengthKind::kLegacyString);
  if (s) {
    v.emplace(*s);
  } else {
    v.reset();
  }
}

void Decoder::NullableBytes(std::optional<std::string>& v) {
  std::optional<std::string_view> s = ReadSized(LengthKind::kArrayOrBytes);
  if (s) {
    v.emplace(*s);
  } else {
    v.reset();
  }
}

void Decoder::Records(RecordSet& v) {
  v.slices.clear();
  std::optional<std::string_view> s = ReadSized(LengthKind::kArrayOrBytes);
  v.is_null = !s.has_value();
  if (s && !s->empty()) v.slices.push_back(*s);
}

void Decoder::TaggedFields(protocol::TaggedFields& v) {
  v.clear();
  if (!flexible_) return;
  uint32_t count = 0;
  UnsignedVarint(count);
  if (!ok()) return;
  if (count > remaining()) {
    Fail("tagged field count");
    return;
  }
  int64_t previous_tag = -1;
  for (uint32_t i = 0; i < count && ok(); ++i) {
    TaggedField field;
    UnsignedVarint(field.tag);
    uint32_t size = 0;
    UnsignedVarint(size);
    if (!ok()) return;
    if (static_cast<int64_t>(field.tag) <= previous_tag) {
      Fail("tagged fields: tags must be strictly increasing");
      return;
    }
    previous_tag = field.tag;
    if (!Need(size)) return;
    field.data.assign(data_.substr(pos_, size));
    pos_ += size;
    v.push_back(std::move(field));
  }
}

// ---- Encoder ----

void Encoder::UnsignedVarint(const uint32_t& value) {
  uint32_t v = value;
  while (v >= 0x80) {
    out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_->push_back(static_cast<char>(v));
}

void Encoder::Varint(const int32_t& v) {
  uint32_t zigzag =
      (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  UnsignedVarint(zigzag);
}

void Encoder::Varlong(const int64_t& v) {
  uint64_t zigzag =
      (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (zigzag >= 0x80) {
    out_->push_back(static_cast<char>((zigzag & 0x7f) | 0x80));
    zigzag >>= 7;
  }
  out_->push_back(static_cast<char>(zigzag));
}

void Encoder::WriteLength(int64_t n, LengthKind kind) {
  if (flexible_ && kind != LengthKind::kLegacyString) {
    UnsignedVarint(static_cast<uint32_t>(n + 1));
  } else if (kind == LengthKind::kArrayOrBytes) {
    Fixed(static_cast<int32_t>(n));
  } else {
    Fixed(static_cast<int16_t>(n));
  }
}

void Encoder::Records(const RecordSet& v) {
  if (v.is_null) {
    WriteLength(-1, LengthKind::kArrayOrBytes);
    return;
  }
  size_t total = v.size();
  WriteLength(static_cast<int64_t>(total), LengthKind::kArrayOrBytes);
  bool owned = splices_ != nullptr && v.owners.size() == v.slices.size();
  if (!owned) {
    // The size is known: one allocation instead of doubling per slice.
    out_->reserve(out_->size() + total);
    for (std::string_view s : v.slices) out_->append(s);
    return;
  }
  for (size_t i = 0; i < v.slices.size(); ++i) {
    std::string_view s = v.slices[i];
    if (s.size() >= kMinSpliceBytes && v.owners[i] != nullptr) {
      splices_->push_back(Splice{out_->size(), s, v.owners[i]});
    } else {
      out_->append(s);
    }
  }
}

void Encoder::TaggedFields(const protocol::TaggedFields& v) {
  if (!flexible_) return;
  UnsignedVarint(static_cast<uint32_t>(v.size()));
  for (const TaggedField& field : v) {
    UnsignedVarint(field.tag);
    UnsignedVarint(static_cast<uint32_t>(field.data.size()));
    out_->append(field.data);
  }
}

}  // namespace exactly::protocol
