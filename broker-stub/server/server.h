// The listening socket and the set of open connections. Everything runs on the
// broker's event-loop thread.
#ifndef EXACTLY_BROKER_SERVER_SERVER_H_
#define EXACTLY_BROKER_SERVER_SERVER_H_

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "server/connection.h"

namespace exactly::broker {

class Server {
 public:
  // Past `max_connections` open at once, a new connection is closed as soon
  // as it is accepted. A listener of a TLS `protocol` needs `tls`, which must
  // outlive the server.
  Server(asio::io_context& io, const ConnectionLimits& limits,
         int32_t max_connections, std::shared_ptr<FrameArena> arena,
         Connection::RequestFn on_request,
         SecurityProtocol protocol = SecurityProtocol::kPlaintext,
         asio::ssl::context* tls = nullptr);
  ~Server();

  // Binds and starts accepting. Port 0 picks a free port; port() tells which.
  absl::Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return port_; }
  SecurityProtocol protocol() const { return protocol_; }

  void CloseAllConnections(std::string_view reason);
  // Closes the listening socket and every connection for `ms`, then listens
  // again on the same port: clients see "connection refused", as with a broker
  // that is down.
  void RefuseConnectionsFor(int32_t ms);
  // Closes the listening socket and every connection until
  // AcceptConnections(): an isolated broker (Cluster::Isolate). A pending
  // RefuseConnectionsFor does not reopen it meanwhile.
  void RefuseConnections();
  absl::Status AcceptConnections();
  // Stops accepting and closes every connection.
  void Stop();
  size_t connection_count() const { return connections_.size(); }

 private:
  void Accept();

  ConnectionLimits limits_;
  int32_t max_connections_;
  std::shared_ptr<FrameArena> arena_;
  Connection::RequestFn on_request_;
  SecurityProtocol protocol_;
  asio::ssl::context* tls_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer down_timer_;
  std::string host_;
  uint16_t port_ = 0;
  uint64_t next_connection_id_ = 1;
  std::map<uint64_t, std::weak_ptr<Connection>> connections_;
  bool stopped_ = false;
  bool refusing_ = false;  // RefuseConnections() until AcceptConnections()
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SERVER_SERVER_H_
