// A client connection's byte stream: the TCP socket itself, or TLS over it
// (SSL and SASL_SSL listeners). Both offer the async_read_some /
// async_write_some pair that asio::async_read and asio::async_write drive.
#ifndef EXACTLY_BROKER_SERVER_STREAM_H_
#define EXACTLY_BROKER_SERVER_STREAM_H_

#include <asio/ip/tcp.hpp>
#include <asio/ssl.hpp>
#include <optional>
#include <string>
#include <utility>

namespace exactly::broker {

class Stream {
 public:
  using executor_type = asio::ip::tcp::socket::executor_type;

  explicit Stream(asio::ip::tcp::socket socket) : tcp_(std::move(socket)) {}
  Stream(asio::ip::tcp::socket socket, asio::ssl::context& tls)
      : tls_(std::in_place, std::move(socket), tls) {}

  executor_type get_executor() { return socket().get_executor(); }
  asio::ip::tcp::socket& socket() { return tls_ ? tls_->next_layer() : *tcp_; }
  bool is_tls() const { return tls_.has_value(); }

  // The TLS server handshake; on plain TCP, `done` is called at once.
  template <class Handler>
  void AsyncHandshake(Handler&& done) {
    if (tls_) {
      tls_->async_handshake(asio::ssl::stream_base::server,
                            std::forward<Handler>(done));
    } else {
      done(asio::error_code());
    }
  }

  // The client certificate's subject ("CN=...,O=..."), empty when none was
  // presented (or on plain TCP).
  std::string PeerSubject();

  template <class Buffers, class Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_->async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  template <class Buffers, class Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_->async_write_some(buffers, std::forward<Handler>(handler));
    }
  }

 private:
  std::optional<asio::ip::tcp::socket> tcp_;
  std::optional<asio::ssl::stream<asio::ip::tcp::socket>> tls_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SERVER_STREAM_H_
