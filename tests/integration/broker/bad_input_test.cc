// Bad input from a client: oversize, truncated and negative frames, unknown
// APIs and versions, corrupt and wrong-format record batches, and mutated real
// frames. Each case gets the right error code where the protocol has one,
// otherwise its connection is closed; and every time the broker must go on
// serving a well-behaved client on another connection.
#include <random>
#include <string>
#include <vector>

#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/produce.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "support/raw_connection.h"
#include "support/wire_samples.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawConnection;
using ::exactly::testing::SizePrefix;

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BrokerOptions options;
    options.max_frame_bytes = 1 << 20;
    absl::StatusOr<std::unique_ptr<Broker>> b = Broker::Start(options);
    ASSERT_TRUE(b.ok()) << b.status();
    broker_ = std::move(*b);
    ASSERT_TRUE(broker_->CreateTopic("t", 1).ok());
  }

  std::string ApiVersionsFrame(int16_t version, int32_t correlation_id) {
    protocol::RequestHeader h;
    h.api_key = static_cast<int16_t>(protocol::ApiKey::kApiVersions);
    h.api_version = version;
    h.correlation_id = correlation_id;
    h.client_id = "bad-input-test";
    protocol::ApiVersionsRequest request;
    request.client_software_name = "test";
    request.client_software_version = "1";
    return protocol::EncodeRequestFrame(h, request);
  }

  // A well-behaved client on a fresh connection still gets its answer.
  void ExpectStillServes() {
    RawConnection c(broker_->port());
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.Send(ApiVersionsFrame(3, 4242)));
    std::optional<std::string> frame = c.ReadFrame();
    ASSERT_TRUE(frame.has_value()) << "the broker stopped serving";
    std::string_view body = *frame;
    absl::StatusOr<int32_t> correlation =
        protocol::ParseResponseHeader(protocol::ApiKey::kApiVersions, 3, &body);
    ASSERT_TRUE(correlation.ok());
    EXPECT_EQ(*correlation, 4242);
    auto response =
        protocol::DecodeMessage<protocol::ApiVersionsResponse>(body, 3);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->error_code, 0);
    EXPECT_GT(response->api_keys.size(), 5u);
  }

  // Sends one Produce v7 request with `records` for t[0] and returns its
  // partition result.
  protocol::ProduceResponse::Partition Produce(const std::string& records) {
    protocol::RequestHeader h;
    h.api_key = static_cast<int16_t>(protocol::ApiKey::kProduce);
    h.api_version = 7;
    h.correlation_id = 7;
    h.client_id = "bad-input-test";
    protocol::ProduceRequest request;
    request.acks = -1;
    request.timeout_ms = 5000;
    request.topics.push_back({"t", {{0, {false, {records}}, {}}}, {}});
    RawConnection c(broker_->port());
    EXPECT_TRUE(c.Send(protocol::EncodeRequestFrame(h, request)));
    std::optional<std::string> frame = c.ReadFrame();
    EXPECT_TRUE(frame.has_value());
    if (!frame) return {};
    std::string_view body = *frame;
    EXPECT_TRUE(
        protocol::ParseResponseHeader(protocol::ApiKey::kProduce, 7, &body)
            .ok());
    auto response = protocol::DecodeMessage<protocol::ProduceResponse>(body, 7);
    EXPECT_TRUE(response.ok()) << response.status();
    if (!response.ok() || response->topics.empty() ||
        response->topics[0].partitions.empty()) {
      return {};
    }
    return response->topics[0].partitions[0];
  }

  std::string GoodBatch() {
    protocol::RecordBatchSpec spec;
    spec.base_timestamp = 1700000000000;
    absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(
        spec, {{"k", "hello", {}, 0}, {"k2", "world", {}, 1}});
    EXPECT_TRUE(batch.ok());
    return *batch;
  }

  int64_t LogEnd() { return broker_->Offsets("t", 0)->log_end_offset; }

  std::unique_ptr<Broker> broker_;
};

TEST_F(BadInputTest, OversizeFrameIsRefusedBeforeItIsRead) {
  RawConnection c(broker_->port());
  // Announces 1 GiB and sends nothing more: the broker closes at once rather
  // than wait for (or allocate) the body.
  ASSERT_TRUE(c.Send(SizePrefix(1 << 30)));
  EXPECT_TRUE(c.ClosedByPeer());
  ExpectStillServes();
}

TEST_F(BadInputTest, NegativeAndZeroLengthsCloseTheConnection) {
  for (int32_t size : {-1, -100000, 0}) {
    RawConnection c(broker_->port());
    ASSERT_TRUE(c.Send(SizePrefix(size)));
    EXPECT_TRUE(c.ClosedByPeer()) << size;
  }
  ExpectStillServes();
}

TEST_F(BadInputTest, TruncatedFrameThenHangUp) {
  {
    RawConnection c(broker_->port());
    std::string frame = ApiVersionsFrame(3, 1);
    ASSERT_TRUE(c.Send(frame.substr(0, frame.size() / 2)));
  }  // the client goes away mid-frame
  ExpectStillServes();
}

TEST_F(BadInputTest, UnknownApiKeyClosesTheConnection) {
  RawConnection c(broker_->port());
  std::string body;
  protocol::Encoder e(&body, 0, false);
  e.Int16(int16_t{999});  // api key
  e.Int16(int16_t{0});
  e.Int32(int32_t{1});
  e.LegacyNullableString(std::optional<std::string>("x"));
  ASSERT_TRUE(c.Send(SizePrefix(static_cast<int32_t>(body.size())) + body));
  EXPECT_TRUE(c.ClosedByPeer());
  ExpectStillServes();
}

TEST_F(BadInputTest, UnsupportedVersionsAreRefused) {
  // ApiVersions above our maximum: UNSUPPORTED_VERSION in a v0 response listing
  // ApiVersions' own range only, as Kafka's (KIP-511).
  RawConnection c(broker_->port());
  ASSERT_TRUE(c.Send(ApiVersionsFrame(99, 5)));
  std::optional<std::string> frame = c.ReadFrame();
  ASSERT_TRUE(frame.has_value());
  std::string_view body = *frame;
  ASSERT_TRUE(
      protocol::ParseResponseHeader(protocol::ApiKey::kApiVersions, 0, &body)
          .ok());
  auto response =
      protocol::DecodeMessage<protocol::ApiVersionsResponse>(body, 0);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->error_code,
            static_cast<int16_t>(protocol::ErrorCode::kUnsupportedVersion));
  ASSERT_EQ(response->api_keys.size(), 1u);
  EXPECT_EQ(response->api_keys[0].api_key,
            static_cast<int16_t>(protocol::ApiKey::kApiVersions));
  EXPECT_EQ(response->api_keys[0].min_version, 0);

  // Any other API at an unknown version cannot be answered in its format:
  // closed.
  RawConnection d(broker_->port());
  protocol::RequestHeader h;
  h.api_key = static_cast<int16_t>(protocol::ApiKey::kProduce);
  h.api_version = 42;
  h.correlation_id = 6;
  std::string frame42 =
      protocol::EncodeRequestFrame(h, protocol::ProduceRequest{});
  ASSERT_TRUE(d.Send(frame42));
  EXPECT_TRUE(d.ClosedByPeer());
  ExpectStillServes();
}

TEST_F(BadInputTest, GarbageBodyClosesTheConnection) {
  RawConnection c(broker_->port());
  // Metadata v4 whose topic array claims two billion entries, and then nothing.
  std::string body;
  protocol::Encoder e(&body, 4, false);
  e.Int16(static_cast<int16_t>(protocol::ApiKey::kMetadata));
  e.Int16(int16_t{4});
  e.Int32(int32_t{8});
  e.LegacyNullableString(std::optional<std::string>("x"));
  e.Int32(int32_t{0x7fffffff});
  ASSERT_TRUE(c.Send(SizePrefix(static_cast<int32_t>(body.size())) + body));
  EXPECT_TRUE(c.ClosedByPeer());
  ExpectStillServes();
}

TEST_F(BadInputTest, CorruptCrcIsCorruptMessageAndAppendsNothing) {
  std::string batch = GoodBatch();
  batch[batch.size() - 3] ^= 0x5a;  // a byte of the last record's value
  protocol::ProduceResponse::Partition result = Produce(batch);
  EXPECT_EQ(result.error_code,
            static_cast<int16_t>(protocol::ErrorCode::kCorruptMessage));
  EXPECT_EQ(LogEnd(), 0);
  // The same batch intact is accepted.
  EXPECT_EQ(Produce(GoodBatch()).error_code, 0);
  EXPECT_EQ(LogEnd(), 2);
  ExpectStillServes();
}

TEST_F(BadInputTest, OldMessageFormatIsUnsupportedForMessageFormat) {
  std::string batch = GoodBatch();
  batch[protocol::kBatchMagicOffset] = 1;
  EXPECT_EQ(
      Produce(batch).error_code,
      static_cast<int16_t>(protocol::ErrorCode::kUnsupportedForMessageFormat));
  EXPECT_EQ(LogEnd(), 0);
}

TEST_F(BadInputTest, TruncatedOrInconsistentBatchesAreRefused) {
  std::string batch = GoodBatch();
  // Cut short: the batch length claims more bytes than the records field holds.
  EXPECT_EQ(Produce(batch.substr(0, batch.size() - 5)).error_code,
            static_cast<int16_t>(protocol::ErrorCode::kCorruptMessage));
  // A header alone.
  EXPECT_EQ(Produce(batch.substr(0, 30)).error_code,
            static_cast<int16_t>(protocol::ErrorCode::kCorruptMessage));
  // Record count that disagrees with the records (CRC recomputed so only the
  // count is wrong).
  std::string lying = batch;
  lying[60] = 3;  // recordCount 2 -> 3
  protocol::UpdateBatchCrc(lying.data(), lying.size());
  EXPECT_NE(Produce(lying).error_code, 0);
  EXPECT_EQ(LogEnd(), 0);
  ExpectStillServes();
}

// Real frames from librdkafka and kafka-python with random bytes flipped, cut
// or appended, sent on many connections: whatever happens to each connection,
// the broker keeps serving.
TEST_F(BadInputTest, MutatedRealFramesNeverTakeTheBrokerDown) {
  std::vector<exactly::testing::WireSample> samples =
      exactly::testing::LoadWireSamples();
  if (samples.empty()) {
    GTEST_SKIP()
        << "shared/wire-samples is not in this checkout; mutation part skipped";
  }
  std::mt19937 rng(20261129);
  for (int round = 0; round < 400; ++round) {
    const auto& s = samples[rng() % samples.size()];
    std::string frame = s.bytes;
    switch (rng() % 4) {
      case 0:  // flip bytes after the size prefix
        for (int i = 0; i < 3; ++i)
          frame[4 + rng() % (frame.size() - 4)] ^= 1 << (rng() % 8);
        break;
      case 1:  // cut the body, keeping the size prefix consistent
        frame = frame.substr(0, 4 + rng() % (frame.size() - 4));
        frame.replace(0, 4, SizePrefix(static_cast<int32_t>(frame.size() - 4)));
        break;
      case 2:  // append junk
        frame += std::string(rng() % 64, static_cast<char>(rng()));
        frame.replace(0, 4, SizePrefix(static_cast<int32_t>(frame.size() - 4)));
        break;
      default:  // send it twice, then a corrupt copy
        frame = frame + frame;
        frame[frame.size() / 2 + 4 + rng() % 8] ^= 0xff;
        break;
    }
    RawConnection c(broker_->port());
    ASSERT_TRUE(c.connected()) << "round " << round << " (" << s.file << ")";
    c.Send(frame);
    c.ReadFrame(20);  // whatever comes back, or nothing
  }
  ExpectStillServes();
}

}  // namespace
}  // namespace exactly::broker
