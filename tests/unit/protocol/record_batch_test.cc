// Record batch v2: build, parse, CRC-32C, validation of what producers send
// (valid, corrupt, truncated, wrong format), control batches, and every
// compression codec, including the real compressed batches librdkafka and
// kafka-python sent.
#include "protocol/record_batch.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "protocol/messages/produce.h"
#include "protocol/request_header.h"
#include "support/wire_samples.h"

namespace exactly::protocol {
namespace {

std::vector<RecordSpec> SampleRecords(int n) {
  std::vector<RecordSpec> records;
  for (int i = 0; i < n; ++i) {
    RecordSpec r;
    r.key = "key-" + std::to_string(i);
    r.value = std::string(50 + i, static_cast<char>('a' + i % 26));
    if (i % 3 == 0) r.headers.push_back({"h", "v" + std::to_string(i)});
    if (i % 5 == 0) r.headers.push_back({"null-value", std::nullopt});
    r.timestamp_delta = i * 7;
    records.push_back(r);
  }
  if (n > 1) records[1].key.reset();    // null key
  if (n > 2) records[2].value.reset();  // null value (a tombstone)
  return records;
}

std::string Build(int16_t attributes, int n = 10) {
  RecordBatchSpec spec;
  spec.attributes = attributes;
  spec.base_timestamp = 1700000000000;
  spec.producer_id = 42;
  spec.producer_epoch = 3;
  spec.base_sequence = 100;
  absl::StatusOr<std::string> b = BuildRecordBatch(spec, SampleRecords(n));
  EXPECT_TRUE(b.ok()) << b.status();
  return *b;
}

TEST(RecordBatchTest, BuildThenParseAndDecodeEveryCodec) {
  for (Compression codec :
       {Compression::kNone, Compression::kGzip, Compression::kSnappy,
        Compression::kLz4, Compression::kZstd}) {
    SCOPED_TRACE(std::string(CompressionName(codec)));
    std::string batch = Build(static_cast<int16_t>(codec));
    BatchCheck check = CheckProduceBatches(batch);
    ASSERT_TRUE(check.ok()) << check.message;
    ASSERT_EQ(check.batches.size(), 1u);
    const RecordBatchHeader& h = check.batches[0].header;
    EXPECT_EQ(h.compression(), codec);
    EXPECT_EQ(h.record_count, 10);
    EXPECT_EQ(h.last_offset_delta, 9);
    EXPECT_EQ(h.producer_id, 42);
    EXPECT_EQ(h.producer_epoch, 3);
    EXPECT_EQ(h.base_sequence, 100);
    EXPECT_EQ(h.last_sequence(), 109);
    EXPECT_EQ(h.max_timestamp, 1700000000000 + 63);
    absl::StatusOr<std::vector<Record>> records =
        DecodeRecords(check.batches[0]);
    ASSERT_TRUE(records.ok()) << records.status();
    std::vector<RecordSpec> expected = SampleRecords(10);
    ASSERT_EQ(records->size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ((*records)[i].offset, static_cast<int64_t>(i));
      EXPECT_EQ((*records)[i].timestamp,
                1700000000000 + expected[i].timestamp_delta);
      EXPECT_EQ((*records)[i].key, expected[i].key);
      EXPECT_EQ((*records)[i].value, expected[i].value);
      EXPECT_EQ((*records)[i].headers, expected[i].headers);
    }
  }
}

TEST(RecordBatchTest, BaseOffsetAndLeaderEpochAreOutsideTheCrc) {
  std::string batch = Build(0);
  SetBatchBaseOffset(batch.data(), 123456);
  SetBatchLeaderEpoch(batch.data(), 9);
  BatchCheck check = CheckProduceBatches(batch);
  ASSERT_TRUE(check.ok()) << check.message;
  EXPECT_EQ(check.batches[0].header.base_offset, 123456);
  EXPECT_EQ(check.batches[0].header.partition_leader_epoch, 9);
}

TEST(RecordBatchTest, EveryFlippedByteInsideTheCrcIsCaught) {
  std::string batch = Build(0, 3);
  for (size_t i = kBatchAttributesOffset; i < batch.size(); ++i) {
    std::string corrupt = batch;
    corrupt[i] ^= 0x10;
    BatchCheck check = CheckProduceBatches(corrupt);
    EXPECT_FALSE(check.ok()) << "byte " << i;
  }
  std::string corrupt_crc = batch;
  corrupt_crc[kBatchCrcOffset] ^= 1;
  EXPECT_EQ(CheckProduceBatches(corrupt_crc).error, ErrorCode::kCorruptMessage);
}

TEST(RecordBatchTest, TruncatedBatchesAreCorruptAtEveryLength) {
  std::string batch = Build(0, 3);
  for (size_t len = 1; len < batch.size(); ++len) {
    BatchCheck check = CheckProduceBatches(batch.substr(0, len));
    EXPECT_EQ(check.error, ErrorCode::kCorruptMessage) << "length " << len;
  }
  EXPECT_EQ(CheckProduceBatches("").error, ErrorCode::kCorruptMessage);
}

TEST(RecordBatchTest, OldMagicAndControlBatchesFromClientsAreRefused) {
  std::string batch = Build(0);
  batch[kBatchMagicOffset] = 1;
  EXPECT_EQ(CheckProduceBatches(batch).error,
            ErrorCode::kUnsupportedForMessageFormat);
  std::string control = BuildControlBatch(7, 1, ControlType::kCommit, 0, 1);
  EXPECT_EQ(CheckProduceBatches(control).error, ErrorCode::kInvalidRecord);
}

TEST(RecordBatchTest, AProducerIdNeedsASequence) {
  RecordBatchSpec spec;
  spec.producer_id = 9;
  spec.producer_epoch = 0;
  spec.base_sequence = -1;
  std::string batch = *BuildRecordBatch(spec, {{"k", "v", {}, 0}});
  EXPECT_EQ(CheckProduceBatches(batch).error, ErrorCode::kInvalidRecord);
  spec.base_sequence = 0;
  EXPECT_TRUE(
      CheckProduceBatches(*BuildRecordBatch(spec, {{"k", "v", {}, 0}})).ok());
}

TEST(RecordBatchTest, RecordsThatDisagreeWithTheHeaderAreRefused) {
  std::string batch = Build(0, 4);
  std::string extra_count = batch;
  extra_count[60] = 5;  // recordCount 4 -> 5, lastOffsetDelta still 3
  UpdateBatchCrc(extra_count.data(), extra_count.size());
  EXPECT_FALSE(CheckProduceBatches(extra_count).ok());
  std::string junk = batch + "xyz";
  // Three junk bytes inside the batch (length and CRC fixed up): records do not
  // end cleanly.
  uint32_t len = static_cast<uint32_t>(junk.size() - 12);
  for (int i = 0; i < 4; ++i)
    junk[8 + i] = static_cast<char>(len >> (24 - 8 * i));
  UpdateBatchCrc(junk.data(), junk.size());
  EXPECT_FALSE(CheckProduceBatches(junk).ok());
}

// Found by record_batch_fuzz: DecodeRecords reserved room for the header's
// record count before reading any record, so a batch claiming 2^31-1 records
// made it allocate hundreds of GB.
TEST(RecordBatchTest, AHugeRecordCountDoesNotAllocateForIt) {
  std::string batch = Build(0, 4);
  for (int i = 0; i < 4; ++i) batch[57 + i] = i == 0 ? '\x7f' : '\xff';
  UpdateBatchCrc(batch.data(), batch.size());
  absl::StatusOr<std::vector<RecordBatchView>> views = SplitBatches(batch);
  ASSERT_TRUE(views.ok());
  ASSERT_EQ(views->size(), 1u);
  EXPECT_EQ((*views)[0].header.record_count, INT32_MAX);
  EXPECT_FALSE(DecodeRecords((*views)[0]).ok());
  EXPECT_FALSE(CheckProduceBatches(batch).ok());
}

// Found by record_batch_fuzz: a base timestamp of INT64_MAX plus a record's
// delta overflowed (undefined behaviour, caught by UBSan). Kafka's Java longs
// wrap; so do these.
TEST(RecordBatchTest, DeltasPastInt64MaxWrapAsInKafka) {
  RecordBatchSpec spec;
  spec.base_timestamp = INT64_MAX;
  absl::StatusOr<std::string> batch = BuildRecordBatch(
      spec, {{.key = "k", .value = "a"},
             {.key = "k", .value = "b", .timestamp_delta = 5}});
  ASSERT_TRUE(batch.ok()) << batch.status();
  // A base offset that its last delta takes past INT64_MAX too.
  for (int i = 0; i < 8; ++i) (*batch)[i] = i == 0 ? '\x7f' : '\xff';
  UpdateBatchCrc(batch->data(), batch->size());
  absl::StatusOr<std::vector<RecordBatchView>> views = SplitBatches(*batch);
  ASSERT_TRUE(views.ok());
  ASSERT_EQ(views->size(), 1u);
  EXPECT_EQ((*views)[0].header.last_offset(), INT64_MIN);
  absl::StatusOr<std::vector<Record>> records = DecodeRecords((*views)[0]);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].timestamp, INT64_MAX);
  EXPECT_EQ((*records)[1].timestamp, INT64_MIN + 4);
  EXPECT_EQ((*records)[1].offset, INT64_MIN);
}

TEST(RecordBatchTest, SeveralBatchesInOneRecordSet) {
  std::string two =
      Build(0, 2) + Build(static_cast<int16_t>(Compression::kLz4), 3);
  BatchCheck check = CheckProduceBatches(two);
  ASSERT_TRUE(check.ok()) << check.message;
  ASSERT_EQ(check.batches.size(), 2u);
  absl::StatusOr<std::vector<RecordBatchView>> split =
      SplitBatches(two + "partial");
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->size(), 2u);
}

TEST(RecordBatchTest, ControlBatchCarriesTheMarker) {
  for (ControlType type : {ControlType::kAbort, ControlType::kCommit}) {
    std::string marker = BuildControlBatch(99, 4, type, 17, 1700000000000);
    absl::StatusOr<RecordBatchHeader> h = ParseBatchHeader(marker);
    ASSERT_TRUE(h.ok());
    EXPECT_TRUE(h->is_control());
    EXPECT_TRUE(h->is_transactional());
    EXPECT_EQ(h->producer_id, 99);
    EXPECT_EQ(h->producer_epoch, 4);
    EXPECT_EQ(h->base_sequence, -1);
    EXPECT_EQ(h->record_count, 1);
    RecordBatchView view{*h, marker};
    absl::StatusOr<ControlType> read = ReadControlType(view);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(*read, type);
    absl::StatusOr<std::vector<Record>> records = DecodeRecords(view);
    ASSERT_TRUE(records.ok());
    // Key: version 0, type; value: version 0, coordinator epoch 17 (what
    // kafkajs matches on).
    EXPECT_EQ(*(*records)[0].key,
              std::string("\0\0\0", 3) + static_cast<char>(type));
    EXPECT_EQ(*(*records)[0].value, std::string("\0\0\0\0\0\x11", 6));
  }
}

TEST(RecordBatchTest, SequenceNumbersWrapAtInt32Max) {
  EXPECT_EQ(RecordBatchHeader::IncrementSequence(5, 3), 8);
  EXPECT_EQ(RecordBatchHeader::IncrementSequence(INT32_MAX, 1), 0);
  EXPECT_EQ(RecordBatchHeader::IncrementSequence(INT32_MAX - 1, 4), 2);
  RecordBatchHeader h;
  h.base_sequence = INT32_MAX - 2;
  h.last_offset_delta = 4;
  EXPECT_EQ(h.last_sequence(), 1);
}

TEST(RecordBatchTest, DecompressionIsBounded) {
  std::string batch = Build(static_cast<int16_t>(Compression::kZstd), 30);
  BatchCheckLimits tight;
  tight.max_decompressed_bytes = 100;
  EXPECT_EQ(CheckProduceBatches(batch, tight).error,
            ErrorCode::kCorruptMessage);
}

// Every batch the real clients sent (each codec) passes the broker's checks and
// decodes to the record count the capture notes state.
TEST(RecordBatchTest, RealClientBatchesOfEveryCodecValidate) {
  std::vector<exactly::testing::WireSample> samples =
      exactly::testing::LoadWireSamples();
  if (samples.empty())
    GTEST_SKIP() << "shared/wire-samples is not in this checkout";
  int batches = 0;
  std::set<std::string> codecs;
  for (const auto& s : samples) {
    if (s.api_name != "Produce") continue;
    SCOPED_TRACE(s.file);
    absl::StatusOr<ParsedRequest> parsed =
        ParseRequest(std::string_view(s.bytes).substr(4));
    ASSERT_TRUE(parsed.ok());
    auto request = DecodeMessage<ProduceRequest>(parsed->body, s.api_version);
    ASSERT_TRUE(request.ok()) << request.status();
    for (const auto& t : request->topics) {
      for (const auto& p : t.partitions) {
        BatchCheck check = CheckProduceBatches(p.records.Contiguous());
        ASSERT_TRUE(check.ok()) << check.message;
        for (const RecordBatchView& b : check.batches) {
          absl::StatusOr<std::vector<Record>> records = DecodeRecords(b);
          ASSERT_TRUE(records.ok()) << records.status();
          EXPECT_EQ(static_cast<int32_t>(records->size()),
                    b.header.record_count);
          codecs.insert(std::string(CompressionName(b.header.compression())));
          ++batches;
        }
      }
    }
  }
  EXPECT_GT(batches, 10);
  EXPECT_EQ(codecs,
            (std::set<std::string>{"gzip", "lz4", "none", "snappy", "zstd"}));
}

}  // namespace
}  // namespace exactly::protocol
