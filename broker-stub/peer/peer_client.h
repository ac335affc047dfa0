// A connection from this broker to another broker of the cluster, for the
// requests brokers send each other (a follower's Fetch, OffsetForLeaderEpoch,
// transaction markers). It speaks the same protocol over the same kind of
// socket as any client, so faults on the network path (a dropped connection,
// a refused one, an isolated broker) hit replication as they hit clients.
//
// Runs on the event loop that owns it; not thread-safe. Requests are written
// in order and may be pipelined; responses come back in the same order, as
// Kafka guarantees per connection. When the connection fails, every request
// in flight or queued fails with Unavailable, and the next Send reconnects
// (no sooner than `reconnect_backoff_ms` after the failure). Destroying the
// client closes the socket; callbacks of requests still pending are then
// dropped, not called. (The socket and the buffers live in a Link that the
// pending asynchronous operations keep alive until they have completed, so
// destroying the client mid-connect or mid-write is safe.)
#ifndef EXACTLY_BROKER_PEER_PEER_CLIENT_H_
#define EXACTLY_BROKER_PEER_PEER_CLIENT_H_

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/request_header.h"
#include "protocol/serde.h"
#include "util/shared_buffer.h"

namespace exactly::broker {

struct PeerClientOptions {
  std::string client_id = "exactly-broker";
  int32_t reconnect_backoff_ms = 50;
  // A response frame larger than this closes the connection.
  int64_t max_frame_bytes = 100 << 20;
};

// A response body, and the frame it lives in: decoded record sets point into
// `frame`, so whoever keeps them keeps `frame` (no copy).
struct PeerResponse {
  SharedBuffer frame;
  std::string_view body;
};

class PeerClient {
 public:
  using RawCallback = std::function<void(absl::StatusOr<PeerResponse>)>;

  static std::unique_ptr<PeerClient> Create(asio::io_context& io,
                                            std::string host, uint16_t port,
                                            PeerClientOptions options = {});
  ~PeerClient();
  PeerClient(const PeerClient&) = delete;
  PeerClient& operator=(const PeerClient&) = delete;

  // Sends `request` at `version`; `done` gets the decoded response, whose
  // record sets point into `frame` (kept alive by the second argument).
  template <class Request, class Response>
  void Send(
      int16_t version, const Request& request,
      std::function<void(absl::StatusOr<Response>, SharedBuffer frame)> done) {
    SendRaw(
        Request::kApiKey, version,
        [&](const protocol::RequestHeader& h) {
          return protocol::EncodeRequestFrame(h, request);
        },
        [version,
         done = std::move(done)](absl::StatusOr<PeerResponse> response) {
          if (!response.ok()) return done(response.status(), nullptr);
          done(protocol::DecodeMessage<Response>(response->body, version),
               std::move(response->frame));
        });
  }

  // Fails whatever is in flight or queued and closes the socket. A later Send
  // reconnects.
  void Close();
  bool connected() const;
  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }

 private:
  class Link;
  PeerClient(std::shared_ptr<Link> link, std::string host, uint16_t port);
  void SendRaw(
      protocol::ApiKey key, int16_t version,
      const std::function<std::string(const protocol::RequestHeader&)>& encode,
      RawCallback done);

  std::shared_ptr<Link> link_;
  const std::string host_;
  const uint16_t port_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_PEER_PEER_CLIENT_H_
