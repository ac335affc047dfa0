#include "peer/peer_client.h"

#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <utility>

#include "absl/strings/str_cat.h"
#include "security/inter_broker.h"

namespace exactly::broker {

// The connection itself. Every asynchronous operation holds a reference, so
// the socket outlives them; the PeerClient that owns it detaches it on
// destruction (callbacks dropped, socket closed).
class PeerClient::Link : public std::enable_shared_from_this<Link> {
 public:
  Link(asio::io_context& io, std::string host, uint16_t port,
       PeerClientOptions options)
      : io_(io),
        host_(std::move(host)),
        port_(port),
        options_(std::move(options)),
        socket_(io),
        backoff_(io) {}

  void SendRaw(
      protocol::ApiKey key, int16_t version,
      const std::function<std::string(const protocol::RequestHeader&)>& encode,
      RawCallback done);
  void Fail(const std::string& why);
  void Detach() {
    detached_ = true;
    Fail("closed");
  }
  bool connected() const { return state_ == State::kConnected; }

 private:
  enum class State { kIdle, kConnecting, kConnected };
  struct Pending {
    protocol::ApiKey key;
    int16_t version;
    int32_t correlation_id;
    std::string frame;
    RawCallback done;
  };
  void Connect();
  void WriteNext();
  void ReadNext();

  asio::io_context& io_;
  const std::string host_;
  const uint16_t port_;
  const PeerClientOptions options_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer backoff_;
  State state_ = State::kIdle;
  std::chrono::steady_clock::time_point failed_at_{};
  int32_t next_correlation_id_ = 1;
  std::deque<Pending> queued_;     // not yet written
  std::deque<Pending> in_flight_;  // written (or being written), unanswered
  bool writing_ = false;
  bool detached_ = false;  // the owner is gone: call no callback
  // Grows each time the socket is closed, so callbacks of an old socket know
  // they are stale.
  uint64_t generation_ = 0;
  char size_prefix_[4];
  // The socket's local address while connected, registered as a broker's.
  std::string endpoint_;
};

std::unique_ptr<PeerClient> PeerClient::Create(asio::io_context& io,
                                               std::string host, uint16_t port,
                                               PeerClientOptions options) {
  auto link = std::make_shared<Link>(io, host, port, std::move(options));
  return std::unique_ptr<PeerClient>(
      new PeerClient(std::move(link), std::move(host), port));
}

PeerClient::PeerClient(std::shared_ptr<Link> link, std::string host,
                       uint16_t port)
    : link_(std::move(link)), host_(std::move(host)), port_(port) {}

PeerClient::~PeerClient() { link_->Detach(); }

void PeerClient::SendRaw(
    protocol::ApiKey key, int16_t version,
    const std::function<std::string(const protocol::RequestHeader&)>& encode,
    RawCallback done) {
  link_->SendRaw(key, version, encode, std::move(done));
}

void PeerClient::Close() { link_->Fail("closed"); }

bool PeerClient::connected() const { return link_->connected(); }

void PeerClient::Link::SendRaw(
    protocol::ApiKey key, int16_t version,
    const std::function<std::string(const protocol::RequestHeader&)>& encode,
    RawCallback done) {
  protocol::RequestHeader header;
  header.api_key = static_cast<int16_t>(key);
  header.api_version = version;
  header.correlation_id = next_correlation_id_++;
  if (next_correlation_id_ == INT32_MAX) next_correlation_id_ = 1;
  header.client_id = options_.client_id;
  queued_.push_back(Pending{key, version, header.correlation_id, encode(header),
                            std::move(done)});
  if (state_ == State::kIdle)
    Connect();
  else if (state_ == State::kConnected)
    WriteNext();
}

void PeerClient::Link::Connect() {
  state_ = State::kConnecting;
  const uint64_t generation = generation_;
  std::shared_ptr<Link> self = shared_from_this();
  auto connect = [this, self, generation] {
    auto resolver = std::make_shared<asio::ip::tcp::resolver>(io_);
    resolver->async_resolve(
        host_, std::to_string(port_),
        [this, self, generation, resolver](
            const asio::error_code& ec,
            asio::ip::tcp::resolver::results_type endpoints) {
          if (generation != generation_) return;
          if (ec)
            return Fail(absl::StrCat("resolving ", host_, ": ", ec.message()));
          asio::async_connect(
              socket_, endpoints,
              [this, self, generation](const asio::error_code& ec,
                                       const asio::ip::tcp::endpoint&) {
                if (generation != generation_) return;
                if (ec)
                  return Fail(absl::StrCat("connecting to ", host_, ":", port_,
                                           ": ", ec.message()));
                asio::error_code ignored;
                socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
                // Before the first request: the broker on the other end
                // trusts it (security/inter_broker.h).
                const asio::ip::tcp::endpoint local =
                    socket_.local_endpoint(ignored);
                if (!ignored) {
                  endpoint_ = absl::StrCat(local.address().to_string(), ":",
                                           local.port());
                  AddInterBrokerEndpoint(endpoint_);
                }
                state_ = State::kConnected;
                ReadNext();
                WriteNext();
              });
        });
  };
  const auto ready_at =
      failed_at_ + std::chrono::milliseconds(options_.reconnect_backoff_ms);
  if (std::chrono::steady_clock::now() >= ready_at) return connect();
  backoff_.expires_at(ready_at);
  backoff_.async_wait(
      [self, generation, this, connect](const asio::error_code& ec) {
        if (ec || generation != generation_) return;
        connect();
      });
}

void PeerClient::Link::WriteNext() {
  if (writing_ || queued_.empty() || state_ != State::kConnected) return;
  in_flight_.push_back(std::move(queued_.front()));
  queued_.pop_front();
  writing_ = true;
  const std::string& frame = in_flight_.back().frame;
  std::shared_ptr<Link> self = shared_from_this();
  asio::async_write(socket_, asio::buffer(frame),
                    [this, self, generation = generation_](
                        const asio::error_code& ec, size_t) {
                      if (generation != generation_) return;
                      writing_ = false;
                      if (ec)
                        return Fail(absl::StrCat("writing: ", ec.message()));
                      WriteNext();
                    });
}

void PeerClient::Link::ReadNext() {
  std::shared_ptr<Link> self = shared_from_this();
  const uint64_t generation = generation_;
  asio::async_read(
      socket_, asio::buffer(size_prefix_, sizeof(size_prefix_)),
      [this, self, generation](const asio::error_code& ec, size_t) {
        if (generation != generation_) return;
        if (ec) return Fail(absl::StrCat("reading: ", ec.message()));
        uint32_t size = 0;
        for (unsigned char c : size_prefix_) size = (size << 8) | c;
        if (size < 4 || size > options_.max_frame_bytes)
          return Fail(absl::StrCat("a response frame of ", size, " bytes"));
        SharedBuffer frame = NewSharedBuffer(size);
        asio::async_read(
            socket_, asio::buffer(frame.get(), size),
            [this, self, generation, frame, size](const asio::error_code& ec,
                                                  size_t) {
              if (generation != generation_) return;
              if (ec) return Fail(absl::StrCat("reading: ", ec.message()));
              if (in_flight_.empty()) return Fail("a response to no request");
              Pending request = std::move(in_flight_.front());
              in_flight_.pop_front();
              std::string_view body(frame.get(), size);
              absl::StatusOr<int32_t> correlation_id =
                  protocol::ParseResponseHeader(request.key, request.version,
                                                &body);
              if (!correlation_id.ok() ||
                  *correlation_id != request.correlation_id) {
                in_flight_.push_front(std::move(request));
                return Fail("a response out of order");
              }
              if (detached_) return;
              request.done(PeerResponse{frame, body});
              // The callback may have closed or destroyed the client.
              if (generation != generation_) return;
              ReadNext();
            });
      });
}

void PeerClient::Link::Fail(const std::string& why) {
  // A callback below may destroy the owner: stay alive until the loop ends.
  std::shared_ptr<Link> self = shared_from_this();
  ++generation_;
  if (!endpoint_.empty()) {
    RemoveInterBrokerEndpoint(endpoint_);
    endpoint_.clear();
  }
  asio::error_code ignored;
  socket_.close(ignored);
  backoff_.cancel();
  state_ = State::kIdle;
  writing_ = false;
  failed_at_ = std::chrono::steady_clock::now();
  std::deque<Pending> failed;
  failed.swap(in_flight_);
  for (Pending& p : queued_) failed.push_back(std::move(p));
  queued_.clear();
  const absl::Status status = absl::UnavailableError(
      absl::StrCat("broker ", host_, ":", port_, ": ", why));
  for (Pending& p : failed) {
    // A callback may destroy the client (detaching this link).
    if (detached_) return;
    p.done(status);
  }
}

}  // namespace exactly::broker
