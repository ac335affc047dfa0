// The spool's record encoding: round trips, nulls, and the CRC catching
// every damaged bit and a record read under another sequence.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spool/checkpoint.h"
#include "spool/format.h"

namespace exactly::internal::spool {
namespace {

TEST(SpoolFormatTest, RecordRoundTripKeepsEveryField) {
  const Header headers[] = {
      {"a", "1"}, {"null", std::string_view()}, {"empty", ""}};
  Record r{.topic = "orders",
           .key = "k",
           .value = "value bytes",
           .partition = 2,
           .timestamp_ms = 1234567,
           .headers = headers};
  EncodedRecord e = EncodeRecord(r, 99, "cursor-7");
  Seal(e, 42);
  EXPECT_TRUE(CheckRecord(e.stored, 42));
  absl::StatusOr<DecodedRecord> d = DecodeRecord(e.stored);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->topic, "orders");
  EXPECT_EQ(d->key, "k");
  EXPECT_EQ(d->value, "value bytes");
  EXPECT_EQ(d->partition, 2);
  EXPECT_EQ(d->timestamp_ms, 1234567);
  EXPECT_EQ(d->append_ms, 99);
  EXPECT_EQ(d->cursor, "cursor-7");
  ASSERT_EQ(d->headers.size(), 3u);
  EXPECT_EQ(d->headers[0].key, "a");
  EXPECT_EQ(d->headers[0].value, "1");
  EXPECT_EQ(d->headers[1].value.data(), nullptr);
  EXPECT_NE(d->headers[2].value.data(), nullptr);
  EXPECT_EQ(d->headers[2].value, "");
}

TEST(SpoolFormatTest, NullAndEmptyKeyAndValueStayApart) {
  Record null_kv{.topic = "t"};
  EncodedRecord e = EncodeRecord(null_kv, 0, "");
  Seal(e, 1);
  absl::StatusOr<DecodedRecord> d = DecodeRecord(e.stored);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->key.data(), nullptr);
  EXPECT_EQ(d->value.data(), nullptr);
  EXPECT_EQ(d->partition, kAnyPartition);

  Record empty_kv{.topic = "t", .key = "", .value = ""};
  e = EncodeRecord(empty_kv, 0, "");
  Seal(e, 1);
  d = DecodeRecord(e.stored);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->key.data(), nullptr);
  EXPECT_NE(d->value.data(), nullptr);
  EXPECT_TRUE(d->key.empty());
}

TEST(SpoolFormatTest, TheCrcCatchesEverySingleBitFlip) {
  const std::string value(100, 'v');  // outlives `r`, which only views it
  Record r{.topic = "orders", .key = "key", .value = value};
  EncodedRecord e = EncodeRecord(r, 5, "c");
  Seal(e, 7);
  const std::string good = e.stored;
  ASSERT_TRUE(CheckRecord(good, 7));
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      EXPECT_FALSE(CheckRecord(bad, 7)) << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(SpoolFormatTest, ARecordUnderAnotherSequenceFailsTheCheck) {
  EncodedRecord e = EncodeRecord({.topic = "t", .value = "v"}, 0, "");
  Seal(e, 1000);
  EXPECT_TRUE(CheckRecord(e.stored, 1000));
  EXPECT_FALSE(CheckRecord(e.stored, 1001));
  EXPECT_FALSE(CheckRecord(e.stored, 0));
  EXPECT_FALSE(CheckRecord("", 1000));
  EXPECT_FALSE(CheckRecord("abc", 1000));
}

TEST(SpoolFormatTest, TruncatedRecordsDoNotDecode) {
  EncodedRecord e =
      EncodeRecord({.topic = "t", .key = "k", .value = "v"}, 0, "cursor");
  Seal(e, 3);
  for (size_t n = 0; n < e.stored.size(); ++n) {
    EXPECT_FALSE(DecodeRecord(e.stored.substr(0, n)).ok()) << n;
  }
}

TEST(SpoolFormatTest, KeysSortBySequence) {
  EXPECT_LT(SeqKey(kRecordPrefix, 255), SeqKey(kRecordPrefix, 256));
  EXPECT_LT(SeqKey(kRecordPrefix, 1), SeqKey(kRecordPrefix, uint64_t{1} << 40));
  EXPECT_EQ(ParseSeqKey(kRecordPrefix, SeqKey(kRecordPrefix, 77)), 77u);
  EXPECT_FALSE(ParseSeqKey(kRecordPrefix, SeqKey(kQuarantinePrefix, 77)));
  EXPECT_FALSE(ParseSeqKey(kRecordPrefix, "r123"));
  EXPECT_EQ(DecodeU64(EncodeU64(0xDEADBEEFCAFEull)), 0xDEADBEEFCAFEull);
}

TEST(SpoolFormatTest, QuarantineEntryRoundTrip) {
  QuarantineEntry e{.reason = "failed its CRC-32C check",
                    .seq = 12,
                    .records = 3,
                    .quarantined_ms = 77,
                    .bytes = std::string("\0\1\2", 3)};
  absl::StatusOr<QuarantineEntry> d = DecodeQuarantine(EncodeQuarantine(e));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->reason, e.reason);
  EXPECT_EQ(d->seq, 12u);
  EXPECT_EQ(d->records, 3u);
  EXPECT_EQ(d->quarantined_ms, 77);
  EXPECT_EQ(d->bytes, e.bytes);
  EXPECT_FALSE(DecodeQuarantine("x").ok());
}

TEST(SpoolCheckpointTest, ValuesRoundTripAndForeignOnesAreRefused) {
  const std::string v = EncodeCheckpoint("abc123", 4567);
  EXPECT_EQ(v, "exactly-spool v1 spool=abc123 seq=4567");
  auto parsed = ParseCheckpoint(v);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->first, "abc123");
  EXPECT_EQ(parsed->second, 4567u);
  EXPECT_FALSE(ParseCheckpoint("exactly-spool v1 spool=abc seq=12x"));
  EXPECT_FALSE(ParseCheckpoint("exactly-spool v1 spool= seq=1"));
  EXPECT_FALSE(ParseCheckpoint("something else"));
  EXPECT_EQ(CheckpointKey("t1"), "spool/t1");
  EXPECT_EQ(ProbeKey("t1"), "probe/t1");
  EXPECT_EQ(CheckpointPartition("t1", 1), 0);
  const int32_t p = CheckpointPartition("writer-7", 5);
  EXPECT_GE(p, 0);
  EXPECT_LT(p, 5);
  EXPECT_EQ(CheckpointPartition("writer-7", 5), p);
}

}  // namespace
}  // namespace exactly::internal::spool
