// Shared checks for the per-API message tests: round trips, truncation,
// hand-written byte layouts, and the captured frames of one API.
#ifndef EXACTLY_TESTS_UNIT_PROTOCOL_MESSAGE_TEST_UTIL_H_
#define EXACTLY_TESTS_UNIT_PROTOCOL_MESSAGE_TEST_UTIL_H_

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/api_key.h"
#include "protocol/request_header.h"
#include "protocol/serde.h"
#include "support/wire_samples.h"

namespace exactly::protocol::testing {

// Bytes from hex, ignoring spaces: Hex("00 01 ff").
inline std::string Hex(std::string_view hex) {
  std::string out;
  int high = -1;
  for (char c : hex) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    int nibble = std::isdigit(static_cast<unsigned char>(c))
                     ? c - '0'
                     : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    if (high < 0) {
      high = nibble;
    } else {
      out.push_back(static_cast<char>(high << 4 | nibble));
      high = -1;
    }
  }
  return out;
}

// Builders of test messages take a version and set only the fields that
// version has; kAllVersions sets every field of every version.
inline constexpr int16_t kAllVersions = -1;

// Whether a field of versions [lo, hi] is set for `version`.
inline bool In(int16_t version, int lo, int hi = INT16_MAX) {
  return version == kAllVersions || (version >= lo && version <= hi);
}

// `full` (every field set) encodes at `version` to the same bytes as
// `expected` (only that version's fields set), decodes back to `expected`, and
// re-encodes to the same bytes. Since the builders state each field's versions
// on their own, a field the Serde code handles at the wrong versions shows up
// as a difference either way.
template <class M>
void ExpectRoundTrip(const M& full, const M& expected, int16_t version) {
  SCOPED_TRACE(std::string(ApiKeyName(M::kApiKey)) + " v" +
               std::to_string(version));
  std::string bytes = EncodeMessage(full, version);
  EXPECT_EQ(EncodeMessage(expected, version), bytes);
  absl::StatusOr<M> decoded = DecodeMessage<M>(bytes, version);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_TRUE(*decoded == expected) << "decoded message differs";
  EXPECT_EQ(EncodeMessage(*decoded, version), bytes);
}

// Every strict prefix of `message`'s encoding fails to decode with
// InvalidArgument, saying what is malformed and where.
template <class M>
void ExpectTruncationFails(const M& message, int16_t version) {
  SCOPED_TRACE(std::string(ApiKeyName(M::kApiKey)) + " v" +
               std::to_string(version));
  std::string bytes = EncodeMessage(message, version);
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<M> decoded =
        DecodeMessage<M>(std::string_view(bytes).substr(0, n), version);
    ASSERT_FALSE(decoded.ok()) << "a " << n << "-byte prefix decoded";
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(decoded.status().message(), ::testing::HasSubstr("malformed"));
  }
}

// One captured request of an API, with its header parsed.
struct CapturedRequest {
  std::string file;
  std::string notes;
  RequestHeader header;
  std::string body;
};

// Every captured request with `key`, in index order; empty when the samples
// are not in this checkout (callers GTEST_SKIP on WireSamplesDir() first).
inline std::vector<CapturedRequest> CapturedRequests(ApiKey key) {
  std::vector<CapturedRequest> out;
  for (const exactly::testing::WireSample& s :
       exactly::testing::LoadWireSamples()) {
    if (s.api_key != static_cast<int16_t>(key)) continue;
    EXPECT_GE(s.bytes.size(), kFrameSizePrefix) << s.file;
    if (s.bytes.size() < kFrameSizePrefix) continue;
    absl::StatusOr<ParsedRequest> parsed =
        ParseRequest(std::string_view(s.bytes).substr(kFrameSizePrefix));
    EXPECT_TRUE(parsed.ok()) << s.file << ": " << parsed.status();
    if (!parsed.ok()) continue;
    out.push_back({s.file, s.notes, parsed->header, std::string(parsed->body)});
  }
  return out;
}

// The captured request `file` of `key`, decoded as M; fails the test (and
// returns a default M) when it is missing or does not decode and re-encode to
// the same body.
template <class M>
M DecodeCaptured(const std::vector<CapturedRequest>& captured,
                 std::string_view file, bool allow_trailing = false) {
  for (const CapturedRequest& c : captured) {
    if (c.file != file) continue;
    absl::StatusOr<M> decoded =
        DecodeMessage<M>(c.body, c.header.api_version, allow_trailing);
    EXPECT_TRUE(decoded.ok()) << file << ": " << decoded.status();
    if (!decoded.ok()) return M();
    std::string reencoded = EncodeMessage(*decoded, c.header.api_version);
    if (!allow_trailing) {
      EXPECT_EQ(reencoded, c.body) << file;
    }
    return *decoded;
  }
  ADD_FAILURE() << "no captured frame " << file;
  return M();
}

// Every captured request in `captured` decodes as M and re-encodes to the
// same body.
template <class M>
void ExpectEveryCapturedRoundTrips(
    const std::vector<CapturedRequest>& captured) {
  for (const CapturedRequest& c : captured) {
    DecodeCaptured<M>(captured, c.file);
  }
}

}  // namespace exactly::protocol::testing

#endif  // EXACTLY_TESTS_UNIT_PROTOCOL_MESSAGE_TEST_UTIL_H_
