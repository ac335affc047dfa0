// The connection a broker opens to another broker (peer/peer_client.h):
// pipelined requests answered in order, Fetch record sets kept without a copy,
// and a dead peer failing every pending request and being reached again once
// it is back.
#include "peer/peer_client.h"

#include <asio/io_context.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"

namespace exactly::broker {
namespace {

using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

std::string Batch(const std::string& value) {
  protocol::RecordBatchSpec spec;
  spec.base_timestamp = 1700000000000;
  absl::StatusOr<std::string> batch =
      protocol::BuildRecordBatch(spec, {{"k", value, {}, 0}});
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? *batch : std::string();
}

ProduceRequest Produce(const std::string& batch) {
  ProduceRequest request;
  request.acks = 1;
  request.timeout_ms = 5000;
  auto& t = request.topics.emplace_back();
  t.name = "t";
  auto& p = t.partitions.emplace_back();
  p.index = 0;
  p.records.slices = {batch};
  return request;
}

// Runs the loop until `done` holds (or 10 s pass, failing the test).
template <class Pred>
void RunUntil(asio::io_context& io, Pred done) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(done()) << "gave up waiting";
}

class PeerClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto broker = Broker::Start({});
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = std::move(*broker);
    ASSERT_TRUE(broker_->CreateTopic("t", 1).ok());
    client_ = PeerClient::Create(io_, "127.0.0.1", broker_->port());
  }

  asio::io_context io_;
  std::unique_ptr<Broker> broker_;
  std::unique_ptr<PeerClient> client_;
};

TEST_F(PeerClientTest, PipelinedRequestsAreAnsweredInOrder) {
  constexpr int kRequests = 50;
  std::vector<std::string> batches;
  for (int i = 0; i < kRequests; ++i)
    batches.push_back(Batch("v" + std::to_string(i)));
  std::vector<int64_t> offsets;
  for (int i = 0; i < kRequests; ++i) {
    client_->Send<ProduceRequest, ProduceResponse>(
        7, Produce(batches[static_cast<size_t>(i)]),
        [&](absl::StatusOr<ProduceResponse> r, SharedBuffer) {
          ASSERT_TRUE(r.ok()) << r.status();
          ASSERT_EQ(r->topics.size(), 1u);
          const auto& p = r->topics[0].partitions[0];
          EXPECT_EQ(p.error_code, 0);
          offsets.push_back(p.base_offset);
        });
  }
  RunUntil(io_, [&] { return offsets.size() == kRequests; });
  for (int i = 0; i < kRequests; ++i)
    EXPECT_EQ(offsets[static_cast<size_t>(i)], i) << "response " << i;
  EXPECT_TRUE(client_->connected());
}

TEST_F(PeerClientTest, FetchedBatchesStayValidWithTheirFrame) {
  const std::string batch = Batch("payload");
  bool produced = false;
  client_->Send<ProduceRequest, ProduceResponse>(
      7, Produce(batch), [&](absl::StatusOr<ProduceResponse> r, SharedBuffer) {
        ASSERT_TRUE(r.ok()) << r.status();
        produced = true;
      });
  RunUntil(io_, [&] { return produced; });

  FetchRequest fetch;
  fetch.replica_id = -1;
  fetch.max_wait_ms = 0;
  fetch.max_bytes = 1 << 20;
  auto& t = fetch.topics.emplace_back();
  t.name = "t";
  auto& p = t.partitions.emplace_back();
  p.fetch_offset = 0;
  p.max_bytes = 1 << 20;
  std::string_view records;
  SharedBuffer kept;
  client_->Send<FetchRequest, FetchResponse>(
      11, fetch, [&](absl::StatusOr<FetchResponse> r, SharedBuffer frame) {
        ASSERT_TRUE(r.ok()) << r.status();
        ASSERT_EQ(r->topics.size(), 1u);
        const auto& part = r->topics[0].partitions[0];
        EXPECT_EQ(part.error_code, 0);
        EXPECT_EQ(part.high_watermark, 1);
        records = part.records.Contiguous();
        kept = std::move(frame);
      });
  RunUntil(io_, [&] { return kept != nullptr; });
  // More traffic after the callback: the kept frame still holds the batch.
  produced = false;
  client_->Send<ProduceRequest, ProduceResponse>(
      7, Produce(Batch("other")),
      [&](absl::StatusOr<ProduceResponse>, SharedBuffer) { produced = true; });
  RunUntil(io_, [&] { return produced; });
  ASSERT_EQ(records.size(), batch.size());
  // The broker stamped the base offset and the partition leader epoch (bytes
  // 0-7 and 12-15); from the magic byte on, the batch is as sent.
  EXPECT_EQ(records.substr(16), std::string_view(batch).substr(16));
}

TEST_F(PeerClientTest, ADeadPeerFailsPendingRequestsAndIsReachedAgainLater) {
  int failed = 0;
  int answered = 0;
  auto send = [&] {
    client_->Send<ProduceRequest, ProduceResponse>(
        7, Produce(Batch("x")),
        [&](absl::StatusOr<ProduceResponse> r, SharedBuffer) {
          if (r.ok()) {
            ++answered;
          } else {
            EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
            ++failed;
          }
        });
  };
  send();
  RunUntil(io_, [&] { return answered == 1; });
  // The peer goes away: the open connection fails, and so does a new one.
  ASSERT_TRUE(broker_->Stop().ok());
  send();
  RunUntil(io_, [&] { return failed == 1; });
  EXPECT_FALSE(client_->connected());
  send();
  RunUntil(io_, [&] { return failed == 2; });
  // It is back on the same port: the next request reconnects.
  ASSERT_TRUE(broker_->Restart(Broker::RestartMode::kClean).ok());
  send();
  RunUntil(io_, [&] { return answered == 2; });
  EXPECT_TRUE(client_->connected());
}

TEST_F(PeerClientTest, ClosingFailsWhatIsQueuedAndDestroyingDropsIt) {
  int failed = 0;
  for (int i = 0; i < 3; ++i)
    client_->Send<ProduceRequest, ProduceResponse>(
        7, Produce(Batch("x")),
        [&](absl::StatusOr<ProduceResponse> r, SharedBuffer) {
          EXPECT_FALSE(r.ok());
          ++failed;
        });
  client_->Close();
  EXPECT_EQ(failed, 3);
  bool called = false;
  client_->Send<ProduceRequest, ProduceResponse>(
      7, Produce(Batch("x")),
      [&](absl::StatusOr<ProduceResponse>, SharedBuffer) { called = true; });
  client_.reset();
  io_.restart();
  io_.run_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace exactly::broker
