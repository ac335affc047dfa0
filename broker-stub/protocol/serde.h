// The two halves of the Kafka wire encoding, Decoder and Encoder, with one
// vocabulary.
//
// Every message struct describes its fields once, in order, in a member
// template
//
//   template <class Io> void Serde(Io& io) {
//     io.Int16(acks);
//     if (io.version() >= 3) io.NullableString(transactional_id);
//     io.Array(topics, [&](Topic& t) { io.String(t.name); ... });
//     io.TaggedFields(tagged_fields);
//   }
//
// and the same function both reads (Io = Decoder) and writes (Io = Encoder) the
// message, so the two directions cannot drift apart. The Io knows the API
// version and whether that version is flexible (compact strings and arrays,
// tagged fields); fields only check the version for presence.
//
// The Decoder never throws and never reads past its input: the first problem
// makes it sticky- failed, later calls are no-ops, and status() says what and
// where. Array and byte lengths are checked against the bytes that remain
// before anything is allocated for them.
#ifndef EXACTLY_BROKER_PROTOCOL_SERDE_H_
#define EXACTLY_BROKER_PROTOCOL_SERDE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/api_key.h"
#include "util/shared_buffer.h"

namespace exactly::protocol {

// A tagged field this code does not interpret, kept so that re-encoding is
// byte-exact.
struct TaggedField {
  uint32_t tag = 0;
  std::string data;
  bool operator==(const TaggedField&) const = default;
};
using TaggedFields = std::vector<TaggedField>;

using Uuid = std::array<uint8_t, 16>;

// How a length prefix is written outside flexible versions: strings use an
// int16, arrays and bytes an int32. Flexible versions use an unsigned varint of
// length+1 for all of them, except for a few header strings that stay int16
// (kLegacyString).
enum class LengthKind { kString, kLegacyString, kArrayOrBytes };

// A RECORDS field: zero or more v2 record batches, carried as raw bytes.
// Decoding yields one slice viewing the input buffer (no copy); encoding writes
// the slices back to back, so a Fetch response can be built from batches held
// in the log without first joining them.
struct RecordSet {
  bool is_null = false;
  std::vector<std::string_view> slices;
  // What keeps each slice alive, parallel to `slices`; empty when the caller
  // guarantees the slices outlive the encoding (decoded requests, tests). Only
  // owned slices may be spliced into a response instead of copied, since the
  // response can be written long after the log dropped them.
  std::vector<broker::SharedBuffer> owners;

  size_t size() const {
    size_t n = 0;
    for (std::string_view s : slices) n += s.size();
    return n;
  }
  // The bytes of a decoded set (which is always a single slice) without a copy.
  std::string_view Contiguous() const {
    return slices.empty() ? std::string_view() : slices[0];
  }
  std::string Joined() const {
    std::string out;
    out.reserve(size());
    for (std::string_view s : slices) out.append(s);
    return out;
  }
  bool operator==(const RecordSet& o) const {
    return is_null == o.is_null && Joined() == o.Joined();
  }
};

// Bytes an Encoder referenced instead of copying: `data` belongs in the output
// right before the byte at offset `at`, and `owner` keeps it alive until the
// output is written.
struct Splice {
  size_t at = 0;
  std::string_view data;
  broker::SharedBuffer owner;
};

// Owned record slices shorter than this are copied anyway: a gather-write entry
// costs more than copying a few hundred bytes.
inline constexpr size_t kMinSpliceBytes = 1024;

class Decoder {
 public:
  static constexpr bool kDecoding = true;

  Decoder(std::string_view input, int16_t version, bool flexible)
      : data_(input), version_(version), flexible_(flexible) {}

  int16_t version() const { return version_; }
  bool flexible() const { return flexible_; }
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  std::string_view rest() const { return data_.substr(pos_); }

  void Int8(int8_t& v) { Fixed(v); }
  void Int16(int16_t& v) { Fixed(v); }
  void Int32(int32_t& v) { Fixed(v); }
  void Int64(int64_t& v) { Fixed(v); }
  void UInt16(uint16_t& v) { Fixed(v); }
  void UInt32(uint32_t& v) { Fixed(v); }
  void Bool(bool& v) {
    int8_t b = 0;
    Fixed(b);
    v = b != 0;
  }
  void Uuid(Uuid& v) {
    if (!Need(v.size())) return;
    std::memcpy(v.data(), data_.data() + pos_, v.size());
    pos_ += v.size();
  }
  void Float64(double& v) {
    uint64_t bits = 0;
    Fixed(bits);
    std::memcpy(&v, &bits, sizeof v);
  }

  // The next n bytes as a view into the input (empty and failed when fewer
  // remain).
  std::string_view Raw(size_t n) {
    if (!Need(n)) return {};
    std::string_view s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }

  // Zig-zag varints, as record fields use them.
  void Varint(int32_t& v);
  void Varlong(int64_t& v);
  // Unsigned varint (compact lengths, tag numbers).
  void UnsignedVarint(uint32_t& v);

  void String(std::string& v) {
    std::optional<std::string> s;
    NullableString(s);
    if (ok() && !s) Fail("null where a string is required");
    if (s) v = std::move(*s);
  }
  void NullableString(std::optional<std::string>& v);
  // A string whose length is always an int16, whatever the version (the request
  // header's client id).
  void LegacyNullableString(std::optional<std::string>& v);
  void Bytes(std::string& v) {
    std::optional<std::string> b;
    NullableBytes(b);
    if (ok() && !b) Fail("null where bytes are required");
    if (b) v = std::move(*b);
  }
  void NullableBytes(std::optional<std::string>& v);
  void Records(RecordSet& v);

  template <class T, class F>
  void Array(std::vector<T>& v, F&& each) {
    std::optional<std::vector<T>> a;
    NullableArray(a, std::forward<F>(each));
    if (ok() && !a) Fail("null where an array is required");
    if (a) v = std::move(*a);
  }
  template <class T, class F>
  void NullableArray(std::optional<std::vector<T>>& v, F&& each) {
    int64_t n = ReadLength(LengthKind::kArrayOrBytes);
    if (!ok()) return;
    if (n < 0) {
      v.reset();
      return;
    }
    // Every element takes at least one byte: a count larger than what is left
    // is a lie, and must not become an allocation. Elements are added one by
    // one for the same reason.
    if (static_cast<uint64_t>(n) > remaining()) {
      Fail("array length " + std::to_string(n) + " exceeds the remaining " +
           std::to_string(remaining()) + " bytes");
      return;
    }
    v.emplace();
    v->reserve(static_cast<size_t>(std::min<int64_t>(n, 1024)));
    for (int64_t i = 0; i < n; ++i) {
      each(v->emplace_back());
      if (!ok()) return;
    }
  }

  // The tagged-field section ending a flexible struct; nothing in other
  // versions.
  void TaggedFields(TaggedFields& v);

  void Fail(std::string_view what);

 private:
  template <class T>
  void Fixed(T& v) {
    if (!Need(sizeof(T))) return;
    using U = std::make_unsigned_t<T>;
    U u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      u = static_cast<U>((u << 8) | static_cast<uint8_t>(data_[pos_ + i]));
    }
    pos_ += sizeof(T);
    v = static_cast<T>(u);
  }
  bool Need(size_t n);
  // A length in this version's encoding (compact or fixed-width); -1 for null.
  int64_t ReadLength(LengthKind kind);
  std::optional<std::string_view> ReadSized(LengthKind kind);

  std::string_view data_;
  size_t pos_ = 0;
  int16_t version_;
  bool flexible_;
  absl::Status status_;
};

class Encoder {
 public:
  static constexpr bool kDecoding = false;

  // With `splices`, owned RECORDS slices are recorded there instead of being
  // copied into `out` (see RecordSet::owners).
  Encoder(std::string* out, int16_t version, bool flexible,
          std::vector<Splice>* splices = nullptr)
      : out_(out), version_(version), flexible_(flexible), splices_(splices) {}

  int16_t version() const { return version_; }
  bool flexible() const { return flexible_; }
  bool ok() const { return true; }

  void Int8(const int8_t& v) { Fixed(v); }
  void Int16(const int16_t& v) { Fixed(v); }
  void Int32(const int32_t& v) { Fixed(v); }
  void Int64(const int64_t& v) { Fixed(v); }
  void UInt16(const uint16_t& v) { Fixed(v); }
  void UInt32(const uint32_t& v) { Fixed(v); }
  void Bool(const bool& v) { Fixed(static_cast<int8_t>(v ? 1 : 0)); }
  void Uuid(const protocol::Uuid& v) {
    out_->append(reinterpret_cast<const char*>(v.data()), v.size());
  }
  void Float64(const double& v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    Fixed(bits);
  }
  void Varint(const int32_t& v);
  void Varlong(const int64_t& v);
  void UnsignedVarint(const uint32_t& v);

  void String(const std::string& v) { WriteSized(v, LengthKind::kString); }
  void NullableString(const std::optional<std::string>& v) {
    WriteNullable(v, LengthKind::kString);
  }
  void LegacyNullableString(const std::optional<std::string>& v) {
    WriteNullable(v, LengthKind::kLegacyString);
  }
  void Bytes(const std::string& v) { WriteSized(v, LengthKind::kArrayOrBytes); }
  void NullableBytes(const std::optional<std::string>& v) {
    WriteNullable(v, LengthKind::kArrayOrBytes);
  }
  void Records(const RecordSet& v);

  template <class T, class F>
  void Array(const std::vector<T>& v, F&& each) {
    WriteLength(static_cast<int64_t>(v.size()), LengthKind::kArrayOrBytes);
    // The Serde functions take non-const references so that one function serves
    // both directions; the Encoder only reads through them.
    for (const T& element : v) each(const_cast<T&>(element));
  }
  template <class T, class F>
  void NullableArray(const std::optional<std::vector<T>>& v, F&& each) {
    if (!v) {
      WriteLength(-1, LengthKind::kArrayOrBytes);
      return;
    }
    Array(*v, std::forward<F>(each));
  }
  void TaggedFields(const protocol::TaggedFields& v);

 private:
  template <class T>
  void Fixed(T v) {
    using U = std::make_unsigned_t<T>;
    U u = static_cast<U>(v);
    char buf[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) {
      buf[i] = static_cast<char>(u >> (8 * (sizeof(T) - 1 - i)));
    }
    out_->append(buf, sizeof(T));
  }
  void WriteLength(int64_t n, LengthKind kind);
  void WriteSized(std::string_view s, LengthKind kind) {
    WriteLength(static_cast<int64_t>(s.size()), kind);
    out_->append(s);
  }
  void WriteNullable(const std::optional<std::string>& v, LengthKind kind) {
    if (v) {
      WriteSized(*v, kind);
    } else {
      WriteLength(-1, kind);
    }
  }

  std::string* out_;
  int16_t version_;
  bool flexible_;
  std::vector<Splice>* splices_;
};

// For the few fields whose nullability changes with the version (JoinGroup's
// ProtocolName from v7, Metadata's topics from v1, ...). A string that may be
// null only where `nullable`. Elsewhere a null on the wire fails decoding, and
// a null value is written as "", which is what Kafka's broker sends in its
// place.
template <class Io>
void StringNullableIf(Io& io, std::optional<std::string>& v, bool nullable) {
  if (nullable) {
    io.NullableString(v);
  } else if constexpr (Io::kDecoding) {
    io.String(v.emplace());
  } else {
    io.String(v ? *v : std::string());
  }
}

// An array that may be null only where `nullable`. Elsewhere a null on the wire
// fails decoding, and a null value is written as an empty array (the encoder
// has no way to fail; callers must not ask for "all" in such a version).
template <class Io, class T, class F>
void ArrayNullableIf(Io& io, std::optional<std::vector<T>>& v, bool nullable,
                     F&& each) {
  if (nullable) {
    io.NullableArray(v, std::forward<F>(each));
  } else if constexpr (Io::kDecoding) {
    io.Array(v.emplace(), std::forward<F>(each));
  } else {
    io.Array(v ? *v : std::vector<T>(), std::forward<F>(each));
  }
}

// Encodes `message` (a struct with a Serde member template) at `version` of its
// API.
template <class M>
std::string EncodeMessage(const M& message, int16_t version) {
  std::string out;
  Encoder encoder(&out, version, IsFlexible(M::kApiKey, version));
  const_cast<M&>(message).Serde(encoder);
  return out;
}

// Decodes `message` from `input` at `version`. Bytes left over after the
// message are an error unless `allow_trailing` (Kafka's broker ignores them;
// see the ListGroups quirk).
template <class M>
absl::StatusOr<M> DecodeMessage(std::string_view input, int16_t version,
                                bool allow_trailing = false) {
  M message;
  Decoder decoder(input, version, IsFlexible(M::kApiKey, version));
  message.Serde(decoder);
  if (!decoder.ok()) return decoder.status();
  if (!allow_trailing && decoder.remaining() != 0) {
    return absl::InvalidArgumentError(std::to_string(decoder.remaining()) +
                                      " unexpected trailing bytes after " +
                                      std::string(ApiKeyName(M::kApiKey)) +
                                      " v" + std::to_string(version));
  }
  return message;
}

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_SERDE_H_
