#include "server/server.h"

#include "absl/strings/str_cat.h"
#include "util/logging.h"

namespace exactly::broker {

Server::Server(asio::io_context& io, const ConnectionLimits& limits,
               int32_t max_connections, std::shared_ptr<FrameArena> arena,
               Connection::RequestFn on_request, SecurityProtocol protocol,
               asio::ssl::context* tls)
    : limits_(limits),
      max_connections_(max_connections),
      arena_(std::move(arena)),
      on_request_(std::move(on_request)),
      protocol_(protocol),
      tls_(tls),
      acceptor_(io),
      down_timer_(io) {}

Server::~Server() { Stop(); }

absl::Status Server::Listen(const std::string& host, uint16_t port) {
  asio::error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec)
    return absl::InvalidArgumentError(
        absl::StrCat("bad listen address ", host));
  asio::ip::tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec)
    acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor_.close();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", host, ":", port, ": ", ec.message()));
  }
  host_ = host;
  port_ = acceptor_.local_endpoint().port();
  stopped_ = false;
  Accept();
  return absl::OkStatus();
}

void Server::Accept() {
  acceptor_.async_accept(
      [this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
        if (ec) {
          if (ec != asio::error::operation_aborted && acceptor_.is_open())
            Accept();
          return;
        }
        if (connections_.size() >= static_cast<size_t>(max_connections_)) {
          asio::error_code ignored;
          auto peer = socket.remote_endpoint(ignored);
          LogWarning("refused a connection from ", peer.address().to_string(),
                     ":", peer.port(), ": ", connections_.size(),
                     " connections are open, the limit (max_connections) is ",
                     max_connections_);
          socket.close(ignored);
          Accept();
          return;
        }
        uint64_t id = next_connection_id_++;
        auto connection = std::make_shared<Connection>(
            tls_ ? Stream(std::move(socket), *tls_) : Stream(std::move(socket)),
            protocol_, id, limits_, arena_, on_request_,
            [this](uint64_t closed) { connections_.erase(closed); });
        connections_[id] = connection;
        LogDebug("accepted connection ", id, " from ", connection->peer());
        connection->Start();
        Accept();
      });
}

void Server::CloseAllConnections(std::string_view reason) {
  std::map<uint64_t, std::weak_ptr<Connection>> all;
  all.swap(connections_);
  for (auto& [id, weak] : all) {
    if (auto c = weak.lock()) c->Close(reason);
  }
}

void Server::RefuseConnectionsFor(int32_t ms) {
  asio::error_code ec;
  acceptor_.close(ec);
  CloseAllConnections("broker down (injected)");
  down_timer_.expires_after(std::chrono::milliseconds(ms));
  down_timer_.async_wait([this](const asio::error_code& e) {
    if (e || stopped_ || refusing_) return;
    absl::Status s = Listen(host_, port_);
    if (s.ok()) {
      LogWarning("fault: broker up again on port ", port_);
    } else {
      LogError("fault: could not listen again after broker down: ",
               s.message());
    }
  });
}

void Server::RefuseConnections() {
  refusing_ = true;
  down_timer_.cancel();
  asio::error_code ec;
  acceptor_.close(ec);
  CloseAllConnections("broker isolated (injected)");
}

absl::Status Server::AcceptConnections() {
  if (!refusing_) return absl::OkStatus();
  refusing_ = false;
  down_timer_.cancel();  // a "broker down" armed meanwhile ends here too
  if (stopped_ || acceptor_.is_open()) return absl::OkStatus();
  return Listen(host_, port_);
}

void Server::Stop() {
  stopped_ = true;
  asio::error_code ec;
  down_timer_.cancel();
  acceptor_.close(ec);
  CloseAllConnections("");
}

}  // namespace exactly::broker
