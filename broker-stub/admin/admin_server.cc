#include "admin/admin_server.h"

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read_until.hpp>
#include <asio/streambuf.hpp>
#include <asio/write.hpp>
#include <istream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "admin/admin_commands.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

// Command lines longer than this are refused (and the connection closed).
constexpr size_t kMaxLine = 4096;

class AdminSession : public std::enable_shared_from_this<AdminSession> {
 public:
  AdminSession(asio::ip::tcp::socket socket, const AdminServer::RunFn& run)
      : socket_(std::move(socket)), run_(run), input_(kMaxLine) {}

  void ReadLine() {
    asio::async_read_until(
        socket_, input_, '\n',
        [self = shared_from_this()](const asio::error_code& ec, size_t) {
          if (ec) return;  // closed, or a line over the limit
          std::istream in(&self->input_);
          std::string line;
          std::getline(in, line);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          if (line.empty()) {
            self->ReadLine();
            return;
          }
          LogInfo("admin: ", line);
          self->reply_ = self->run_(line) + "\n";
          asio::async_write(self->socket_, asio::buffer(self->reply_),
                            [self](const asio::error_code& e, size_t) {
                              if (!e) self->ReadLine();
                            });
        });
  }

 private:
  asio::ip::tcp::socket socket_;
  const AdminServer::RunFn& run_;  // the server's, which outlives its sessions
  asio::streambuf input_;
  std::string reply_;
};

}  // namespace

struct AdminServer::Impl {
  explicit Impl(RunFn r) : run(std::move(r)), acceptor(io) {}
  void Accept() {
    acceptor.async_accept(
        [this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
          if (ec) return;
          std::make_shared<AdminSession>(std::move(socket), run)->ReadLine();
          Accept();
        });
  }

  RunFn run;
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor;
  std::thread thread;
};

absl::StatusOr<std::unique_ptr<AdminServer>> AdminServer::Start(
    Broker& broker, const std::string& host, uint16_t port) {
  return Start(
      [&broker](std::string_view line) {
        return RunAdminCommand(broker, line);
      },
      host, port);
}

absl::StatusOr<std::unique_ptr<AdminServer>> AdminServer::Start(
    RunFn run, const std::string& host, uint16_t port) {
  auto impl = std::make_unique<Impl>(std::move(run));
  asio::error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec)
    return absl::InvalidArgumentError(absl::StrCat("bad admin address ", host));
  asio::ip::tcp::endpoint endpoint(address, port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec)
    impl->acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for admin commands on ", host, ":", port,
                     ": ", ec.message()));
  }
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<AdminServer>(new AdminServer(std::move(impl)));
}

AdminServer::AdminServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

AdminServer::~AdminServer() {
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

uint16_t AdminServer::port() const {
  return impl_->acceptor.local_endpoint().port();
}

}  // namespace exactly::broker
