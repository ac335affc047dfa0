// The broker's memory for its logs is bounded by what they keep, whatever the
// requests (issue 18, finding 2): a stored batch pins the request frame it
// arrived in, and the frame its chunk of the frame arena, so a client that
// stores a little and sends large throwaway frames between could pin a
// gigabyte with a quarter of a megabyte. Each pattern below is sent over the
// wire; the broker's accounting (Broker::GetLogMemory) must stay within
// 2 x retained + 50 MB, and the common case must stay zero-copy.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "support/raw_connection.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawConnection;

constexpr char kTopic[] = "memory";
constexpr int64_t kSlack = 50'000'000;

class FrameMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Broker>> b = Broker::Start(BrokerOptions{});
    ASSERT_TRUE(b.ok()) << b.status();
    broker_ = std::move(*b);
    ASSERT_TRUE(broker_->CreateTopic(kTopic, 1).ok());
    connection_ = std::make_unique<RawConnection>(broker_->port());
    ASSERT_TRUE(connection_->connected());
  }

  // A batch of `records` records of `value_bytes` each; producer id -1, so
  // that every one is stored.
  static std::string Batch(int records, size_t value_bytes) {
    std::vector<protocol::RecordSpec> rs;
    for (int i = 0; i < records; ++i) {
      rs.push_back({"k", std::string(value_bytes, 'v'), {}, i});
    }
    protocol::RecordBatchSpec spec;
    spec.base_timestamp = 1700000000000;
    absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(spec, rs);
    EXPECT_TRUE(batch.ok()) << batch.status();
    return batch.ok() ? *batch : std::string();
  }

  // `frame` with `padding` bytes after its body, its size prefix to match.
  static std::string Padded(std::string frame, size_t padding) {
    frame.append(padding, '\0');
    const uint32_t size = static_cast<uint32_t>(frame.size() - 4);
    for (int i = 0; i < 4; ++i) {
      frame[i] = static_cast<char>(size >> (24 - 8 * i));
    }
    return frame;
  }

  // Produce v7 (one batch per partition from v3 on) to partition 0.
  std::string ProduceFrame(const std::string& batch,
                           const std::string& topic = kTopic) {
    protocol::ProduceRequest request;
    request.acks = 1;
    request.timeout_ms = 5000;
    protocol::ProduceRequest::Topic& t = request.topics.emplace_back();
    t.name = topic;
    t.partitions.push_back({0, {false, {batch}, {}}, {}});
    protocol::RequestHeader h;
    h.api_key = static_cast<int16_t>(protocol::ProduceRequest::kApiKey);
    h.api_version = 7;
    h.correlation_id = ++correlation_;
    h.client_id = "frame-memory-test";
    return protocol::EncodeRequestFrame(h, request);
  }

  std::string ApiVersionsFrame() {
    protocol::RequestHeader h;
    h.api_key = static_cast<int16_t>(protocol::ApiVersionsRequest::kApiKey);
    h.api_version = 0;
    h.correlation_id = ++correlation_;
    h.client_id = "frame-memory-test";
    return protocol::EncodeRequestFrame(h, protocol::ApiVersionsRequest{});
  }

  // Sends `frame` and waits for its answer, so that the broker has handled it.
  void Roundtrip(const std::string& frame) {
    ASSERT_TRUE(connection_->Send(frame));
    ASSERT_TRUE(connection_->ReadFrame(10000).has_value())
        << "no answer: the broker closed the connection";
  }

  void ExpectBounded(const LogMemory& m) {
    EXPECT_GT(m.retained_bytes, 0);
    EXPECT_LE(m.frame_bytes + m.copied_bytes, 2 * m.retained_bytes + kSlack)
        << "retained " << m.retained_bytes << " bytes; frame chunks "
        << m.frame_bytes << ", of which the log keeps " << m.kept_in_frames
        << "; copied out " << m.copied_bytes;
  }

  std::unique_ptr<Broker> broker_;
  std::unique_ptr<RawConnection> connection_;
  int32_t correlation_ = 0;
};

// The pattern of the report: one ~4 KiB record, then fifteen 1 MiB throwaway
// frames, 64 times. Before the bound: 64 chunks of 16 MiB pinned by 266 KB.
TEST_F(FrameMemoryTest, ThrowawayFramesBetweenSmallAppendsAreNotPinned) {
  const std::string batch = Batch(1, 4000);
  for (int round = 0; round < 64; ++round) {
    Roundtrip(ProduceFrame(batch));
    for (int i = 0; i < 15; ++i) {
      Roundtrip(Padded(ApiVersionsFrame(), size_t{1} << 20));
    }
  }
  const LogMemory m = broker_->GetLogMemory();
  EXPECT_EQ(m.retained_bytes, static_cast<int64_t>(64 * batch.size()));
  ExpectBounded(m);
}

// A Produce frame padded far beyond the batch it carries: the padding is not
// kept with the batch.
TEST_F(FrameMemoryTest, PaddingAfterAProduceBodyIsNotPinned) {
  const std::string batch = Batch(1, 40);
  for (int i = 0; i < 200; ++i) {
    Roundtrip(Padded(ProduceFrame(batch), size_t{1} << 20));
  }
  const LogMemory m = broker_->GetLogMemory();
  EXPECT_EQ(m.retained_bytes, static_cast<int64_t>(200 * batch.size()));
  ExpectBounded(m);
}

// Produce frames of nearly 1 MiB, full of the batches they carry: stored where
// they arrived, not copied (the zero-copy path of the common case).
TEST_F(FrameMemoryTest, FullProduceFramesStayZeroCopy) {
  // Produce v3+ carries one batch per partition.
  const std::string batch = Batch(1000, 1000);
  for (int i = 0; i < 100; ++i) Roundtrip(ProduceFrame(batch));
  const LogMemory m = broker_->GetLogMemory();
  ExpectBounded(m);
  EXPECT_EQ(m.kept_in_frames, m.retained_bytes)
      << "a full frame's batches were copied";
}

// Retention empties chunks in offset order: what the log still keeps in a
// half-emptied chunk is copied out once the chunks waste too much, and memory
// follows the retained bytes down.
TEST_F(FrameMemoryTest, RetentionReleasesChunksAsTheLogShrinks) {
  ASSERT_TRUE(
      broker_->CreateTopic("bounded", 1, {{"retention.bytes", "20000000"}})
          .ok());
  const std::string batch = Batch(1000, 1000);
  for (int i = 0; i < 400; ++i) Roundtrip(ProduceFrame(batch, "bounded"));
  const LogMemory m = broker_->GetLogMemory();
  EXPECT_LE(m.retained_bytes, 20'000'000 + 2'000'000);
  ExpectBounded(m);
}

}  // namespace
}  // namespace exactly::broker
