// Limits a client cannot get around (issue 18): connections open at once,
// bytes of requests read from one connection and not yet answered, and the
// decompressed size of a batch. Each is set low, driven past over the wire,
// and must give a clear outcome with nothing lost.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "exactly/broker/broker.h"
#include "gtest/gtest.h"
#include "protocol/api_key.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "support/raw_client.h"
#include "support/raw_connection.h"

namespace exactly::broker {
namespace {

using ::exactly::testing::RawClient;
using ::exactly::testing::RawConnection;

std::unique_ptr<Broker> StartBroker(const BrokerOptions& options) {
  absl::StatusOr<std::unique_ptr<Broker>> b = Broker::Start(options);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? std::move(*b) : nullptr;
}

// An ApiVersions v0 frame with `padding` bytes after its body.
std::string ApiVersionsFrame(int32_t correlation_id, size_t padding = 0) {
  protocol::RequestHeader h;
  h.api_key = static_cast<int16_t>(protocol::ApiVersionsRequest::kApiKey);
  h.api_version = 0;
  h.correlation_id = correlation_id;
  h.client_id = "limits-test";
  std::string frame =
      protocol::EncodeRequestFrame(h, protocol::ApiVersionsRequest{});
  frame.append(padding, '\0');
  const uint32_t size = static_cast<uint32_t>(frame.size() - 4);
  for (int i = 0; i < 4; ++i)
    frame[i] = static_cast<char>(size >> (24 - 8 * i));
  return frame;
}

bool Answers(RawConnection& c) {
  return c.Send(ApiVersionsFrame(1)) && c.ReadFrame(5000).has_value();
}

TEST(BrokerLimitsTest, ConnectionsPastTheLimitAreClosedAndRoomComesBack) {
  BrokerOptions options;
  options.max_connections = 2;
  std::unique_ptr<Broker> broker = StartBroker(options);
  ASSERT_NE(broker, nullptr);
  auto first = std::make_unique<RawConnection>(broker->port());
  RawConnection second(broker->port());
  ASSERT_TRUE(Answers(*first));
  ASSERT_TRUE(Answers(second));

  RawConnection third(broker->port());
  EXPECT_TRUE(third.ClosedByPeer()) << "a third connection was kept";

  // One goes away: there is room again (once the broker has seen it close).
  first.reset();
  bool answered = false;
  for (int attempt = 0; attempt < 100 && !answered; ++attempt) {
    RawConnection again(broker->port());
    answered = Answers(again);
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(answered);
  EXPECT_TRUE(Answers(second)) << "an accepted connection was disturbed";
}

// A client that pipelines requests and does not read the answers: the broker
// stops reading it once the limit is in flight, so what it takes in is the
// limit plus the kernel's socket buffers, not everything the client pushes.
// Once answers flow again every request is answered, none lost.
TEST(BrokerLimitsTest, AClientThatStopsReadingStallsItselfNotTheBroker) {
  BrokerOptions options;
  options.max_in_flight_request_bytes = 1 << 20;
  std::unique_ptr<Broker> broker = StartBroker(options);
  ASSERT_NE(broker, nullptr);
  // Answers held back: requests stay in flight.
  broker->faults().AddLatency(
      2000, {.api_key = static_cast<int16_t>(protocol::ApiKey::kApiVersions)});

  RawConnection c(broker->port());
  ASSERT_TRUE(c.connected());
  const int fd = c.fd();
  const int flags = fcntl(fd, F_GETFL);
  ASSERT_EQ(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
  // 4 MiB frames, up to 256 MiB: without the limit the broker reads 64 of
  // them (its cap on requests in flight) before it stops.
  constexpr size_t kFrame = size_t{4} << 20;
  constexpr int kMaxFrames = 64;
  std::vector<std::string> frames;
  size_t accepted = 0, offset = 0;
  int32_t correlation = 0;
  std::string current = ApiVersionsFrame(++correlation, kFrame);
  for (;;) {
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, 1000) <= 0) break;  // a second without room: stalled
    ssize_t n = ::send(fd, current.data() + offset, current.size() - offset,
                       MSG_NOSIGNAL);
    if (n <= 0) continue;
    accepted += static_cast<size_t>(n);
    offset += static_cast<size_t>(n);
    if (offset == current.size()) {
      frames.push_back(std::move(current));
      if (static_cast<int>(frames.size()) == kMaxFrames) break;
      current = ApiVersionsFrame(++correlation, kFrame);
      offset = 0;
    }
  }
  EXPECT_LT(accepted, size_t{100} << 20)
      << "the broker kept reading a client that reads none of its answers";
  EXPECT_LT(static_cast<int>(frames.size()), kMaxFrames);

  // The answers flow: the rest is sent, and every request is answered.
  broker->faults().Clear();
  ASSERT_EQ(fcntl(fd, F_SETFL, flags), 0);
  if (offset > 0) {
    ASSERT_TRUE(c.Send(current.substr(offset)));
    frames.push_back(std::move(current));
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_TRUE(c.ReadFrame(30000).has_value()) << "answer " << i << " lost";
  }
}

TEST(BrokerLimitsTest, ABatchDecompressingPastTheLimitIsRefused) {
  BrokerOptions options;
  options.max_decompressed_batch_bytes = 1 << 20;
  std::unique_ptr<Broker> broker = StartBroker(options);
  ASSERT_NE(broker, nullptr);
  ASSERT_TRUE(broker->CreateTopic("bombs", 1).ok());
  auto produce = [&](size_t value_bytes) {
    protocol::RecordBatchSpec spec;
    spec.attributes = 1;  // gzip
    spec.base_timestamp = 1700000000000;
    absl::StatusOr<std::string> batch = protocol::BuildRecordBatch(
        spec, {{"k", std::string(value_bytes, '\0'), {}, 0}});
    EXPECT_TRUE(batch.ok()) << batch.status();
    protocol::ProduceRequest request;
    request.acks = -1;
    request.timeout_ms = 5000;
    protocol::ProduceRequest::Topic& t = request.topics.emplace_back();
    t.name = "bombs";
    t.partitions.push_back({0, {false, {*batch}, {}}, {}});
    RawClient client(broker->port(), "limits-test");
    protocol::ProduceResponse response =
        client.Call<protocol::ProduceResponse>(request, 7);
    EXPECT_EQ(response.topics.size(), 1u);
    EXPECT_EQ(response.topics[0].partitions.size(), 1u);
    return response.topics[0].partitions[0].error_code;
  };
  EXPECT_EQ(produce(512 * 1024), 0);
  EXPECT_EQ(produce(4 << 20),
            static_cast<int16_t>(protocol::ErrorCode::kCorruptMessage));
  absl::StatusOr<std::vector<LoggedBatch>> log = broker->ReadLog("bombs", 0);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->size(), 1u) << "only the batch within the limit is stored";
}

TEST(BrokerLimitsTest, LimitsMustBePositive) {
  for (auto set :
       {+[](BrokerOptions& o) { o.max_connections = 0; },
        +[](BrokerOptions& o) { o.max_in_flight_request_bytes = 0; },
        +[](BrokerOptions& o) { o.max_decompressed_batch_bytes = -1; }}) {
    BrokerOptions options;
    set(options);
    EXPECT_EQ(Broker::Start(options).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace exactly::broker
