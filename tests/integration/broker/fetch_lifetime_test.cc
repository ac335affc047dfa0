// A Fetch response refers to the log's batches instead of copying them, and is
// written only when every earlier response on its connection has gone out. It
// must still carry the right bytes when the log drops those batches in the
// meantime (DeleteTopics, DeleteRecords): the response keeps them alive.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "crc32c/crc32c.h"
#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/api_key.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "support/raw_connection.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawConnection;
using protocol::ApiKey;

constexpr int kRecords = 200;
constexpr size_t kValueBytes = 1000;  // ~200 KB batches: well above splicing

protocol::RequestHeader Header(ApiKey key, int16_t version,
                               int32_t correlation_id) {
  protocol::RequestHeader h;
  h.api_key = static_cast<int16_t>(key);
  h.api_version = version;
  h.correlation_id = correlation_id;
  h.client_id = "fetch-lifetime-test";
  return h;
}

// One batch of kRecords records whose values start with `fill`.
std::string Batch(char fill) {
  std::vector<protocol::RecordSpec> records;
  for (int i = 0; i < kRecords; ++i) {
    records.push_back({"k" + std::to_string(i),
                       std::string(kValueBytes, fill) + std::to_string(i),
                       {},
                       i});
  }
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = 1700000000000;
  absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(spec, records);
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? *batch : std::string();
}

// Reads one response; `frame` keeps its bytes, which the decoded records view.
template <class Response>
absl::StatusOr<Response> ReadResponse(RawConnection& c, ApiKey key,
                                      int16_t version, int32_t correlation_id,
                                      std::string* frame) {
  std::optional<std::string> read = c.ReadFrame();
  if (!read) return absl::UnavailableError("no response");
  *frame = std::move(*read);
  std::string_view body = *frame;
  absl::StatusOr<int32_t> correlation =
      protocol::ParseResponseHeader(key, version, &body);
  if (!correlation.ok()) return correlation.status();
  if (*correlation != correlation_id)
    return absl::InternalError("out of order response");
  return protocol::DecodeMessage<Response>(body, version);
}

class FetchLifetimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BrokerOptions options;
    options.max_frame_bytes = 8 << 20;
    absl::StatusOr<std::unique_ptr<Broker>> b = Broker::Start(options);
    ASSERT_TRUE(b.ok()) << b.status();
    broker_ = std::move(*b);
    ASSERT_TRUE(broker_->CreateTopic("t", 1).ok());
    ASSERT_TRUE(broker_->CreateTopic("other", 1).ok());
  }

  void Produce(const std::string& topic, const std::string& batch) {
    protocol::ProduceRequest request;
    request.acks = -1;
    request.timeout_ms = 5000;
    request.topics.push_back({topic, {{0, {false, {batch}}, {}}}, {}});
    RawConnection c(broker_->port());
    ASSERT_TRUE(c.Send(
        protocol::EncodeRequestFrame(Header(ApiKey::kProduce, 7, 1), request)));
    std::string frame;
    auto response = ReadResponse<protocol::ProduceResponse>(c, ApiKey::kProduce,
                                                            7, 1, &frame);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->topics[0].partitions[0].error_code, 0);
  }

  // Pipelines an ApiVersions request, answered late (injected latency), and a
  // Fetch of t[0] from offset 0, answered at once but queued behind it; runs
  // `meanwhile` while the fetch response waits; then checks it holds every
  // record of `expected`.
  template <class F>
  void FetchBehindSlowResponse(const std::string& expected, F meanwhile) {
    broker_->faults().AddLatency(
        1500, {.api_key = static_cast<int16_t>(ApiKey::kApiVersions)});
    RawConnection c(broker_->port());
    protocol::ApiVersionsRequest versions;
    versions.client_software_name = "test";
    versions.client_software_version = "1";
    protocol::FetchRequest fetch;
    fetch.max_wait_ms = 0;
    // A partition limit of one byte: just the first batch (KIP-74).
    fetch.topics.push_back({"t", {{0, -1, 0, -1, 1, {}}}, {}});
    ASSERT_TRUE(c.Send(
        protocol::EncodeRequestFrame(Header(ApiKey::kApiVersions, 3, 1),
                                     versions) +
        protocol::EncodeRequestFrame(Header(ApiKey::kFetch, 4, 2), fetch)));
    // Both are handled at once; the fetch response is now encoded and waiting.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    meanwhile();
    broker_->faults().AddLatency(0);

    std::string frame;
    auto first = ReadResponse<protocol::ApiVersionsResponse>(
        c, ApiKey::kApiVersions, 3, 1, &frame);
    ASSERT_TRUE(first.ok()) << first.status();
    std::string fetch_frame;  // the records below view it
    auto response = ReadResponse<protocol::FetchResponse>(c, ApiKey::kFetch, 4,
                                                          2, &fetch_frame);
    ASSERT_TRUE(response.ok()) << response.status();
    const protocol::FetchResponse::Partition& p =
        response->topics.at(0).partitions.at(0);
    ASSERT_EQ(p.error_code, 0);
    std::string records = p.records.Joined();
    ASSERT_EQ(records.size(), expected.size());
    auto batches = protocol::SplitBatches(records);
    ASSERT_TRUE(batches.ok()) << batches.status();
    ASSERT_EQ(batches->size(), 1u);
    auto decoded = protocol::DecodeRecords(batches->front());
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(crc32c::Value(records.substr(protocol::kBatchAttributesOffset)),
              batches->front().header.crc);
    auto want =
        protocol::DecodeRecords(protocol::SplitBatches(expected)->at(0));
    ASSERT_TRUE(want.ok());
    ASSERT_EQ(decoded->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) {
      EXPECT_EQ((*decoded)[i].value, (*want)[i].value) << i;
    }
  }

  // Scribbles over freed memory the way a busy broker would: new batches of
  // the same size arrive while the old ones are gone.
  void ReuseFreedMemory() {
    for (int i = 0; i < 3; ++i) Produce("other", Batch('z'));
  }

  std::unique_ptr<Broker> broker_;
};

TEST_F(FetchLifetimeTest, QueuedFetchResponseOutlivesDeletedTopic) {
  std::string batch = Batch('a');
  Produce("t", batch);
  FetchBehindSlowResponse(batch, [&] {
    protocol::DeleteTopicsRequest request;
    request.topic_names = {"t"};
    request.timeout_ms = 5000;
    RawConnection admin(broker_->port());
    ASSERT_TRUE(admin.Send(protocol::EncodeRequestFrame(
        Header(ApiKey::kDeleteTopics, 1, 9), request)));
    std::string frame;
    auto response = ReadResponse<protocol::DeleteTopicsResponse>(
        admin, ApiKey::kDeleteTopics, 1, 9, &frame);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->topics.at(0).error_code, 0);
    ASSERT_TRUE(broker_->CreateTopic("t", 1).ok());  // and a new one, empty
    ReuseFreedMemory();
  });
}

TEST_F(FetchLifetimeTest, QueuedFetchResponseOutlivesDeletedRecords) {
  std::string batch = Batch('b');
  Produce("t", batch);
  Produce("t", Batch('c'));  // DeleteRecords may not pass the high watermark
  FetchBehindSlowResponse(batch, [&] {
    protocol::DeleteRecordsRequest request;
    request.topics.push_back({"t", {{0, kRecords, {}}}, {}});
    request.timeout_ms = 5000;
    RawConnection admin(broker_->port());
    ASSERT_TRUE(admin.Send(protocol::EncodeRequestFrame(
        Header(ApiKey::kDeleteRecords, 1, 9), request)));
    std::string frame;
    auto response = ReadResponse<protocol::DeleteRecordsResponse>(
        admin, ApiKey::kDeleteRecords, 1, 9, &frame);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->topics.at(0).partitions.at(0).error_code, 0);
    ASSERT_EQ(broker_->Offsets("t", 0)->log_start_offset, kRecords);
    ReuseFreedMemory();
  });
}

}  // namespace
}  // namespace exactly::broker
