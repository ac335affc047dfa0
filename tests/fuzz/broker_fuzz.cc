// The broker as a state machine: each input is a sequence of steps played
// against a fresh in-memory broker (BrokerState, the real handlers and
// Connection), single-threaded, with no sockets but a socketpair. Groups,
// transactions, producers and their timers carry state from one request to the
// next, which a one-request target (request_fuzz) never reaches: a static
// member leaving by instance id and the rebalance timer that follows (issue 18,
// finding 1) is the kind of sequence this is for.
//
// Input: steps of [op: 1 byte][length: 2 bytes big-endian][payload].
//   op % 8 in 0..4  the payload is one request frame (header and body); the
//                   size prefix is added. A closed connection is replaced
//                   first.
//   op % 8 == 5     no payload: run the loop for length % 12 ms, so that
//                   session, rebalance, join-delay and transaction timers fire.
//   op % 8 == 6     no payload: close the connection (what a client crash
//                   does); the next frame opens a new one.
//   op % 8 == 7     the payload is written as raw bytes, no size prefix added
//                   (frames split or run together across writes).
// After each step the loop runs until it has nothing ready. Responses are read
// and dropped: the oracles are the sanitizers (memory errors, leaks, undefined
// behaviour), the broker's own checks, and libFuzzer's timeout and memory
// limit.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "cluster/broker_state.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/faults.h"
#include "group/group.h"
#include "handlers/dispatch.h"
#include "server/connection.h"
#include "util/logging.h"

namespace exactly::broker {
namespace {

constexpr int kMaxSteps = 96;
constexpr int kMaxSettleRounds = 64;

BrokerOptions FuzzOptions() {
  BrokerOptions o;  // in memory: no data_dir
  // Small enough that a step of a few milliseconds lets timers fire.
  o.group_initial_rebalance_delay_ms = 3;
  o.group_min_session_timeout_ms = 1;
  o.transaction_abort_check_interval_ms = 5;
  o.auto_create_topics = true;
  return o;
}

// One input's broker and the client end of its current connection.
class FuzzSession {
 public:
  FuzzSession() {
    absl::StatusOr<std::unique_ptr<BrokerState>> state =
        BrokerState::Open(FuzzOptions(), io_, faults_, nullptr);
    if (state.ok()) state_ = std::move(*state);
  }

  ~FuzzSession() {
    if (state_ == nullptr) return;
    Disconnect();
    Settle();
    // As Broker::Stop: the state goes while the loop is stopped, and the loop
    // (with what is still queued on it) after.
    io_.stop();
    connection_.reset();
    state_.reset();
  }

  bool ok() const { return state_ != nullptr; }

  void SendFrame(const uint8_t* data, size_t size) {
    if (connection_ == nullptr || connection_->closed()) Connect();
    const uint32_t n = static_cast<uint32_t>(size);
    const unsigned char prefix[4] = {static_cast<unsigned char>(n >> 24),
                                     static_cast<unsigned char>(n >> 16),
                                     static_cast<unsigned char>(n >> 8),
                                     static_cast<unsigned char>(n)};
    Write(prefix, sizeof prefix);
    Write(data, size);
    Settle();
  }

  void SendRaw(const uint8_t* data, size_t size) {
    if (connection_ == nullptr || connection_->closed()) Connect();
    Write(data, size);
    Settle();
  }

  void Wait(int ms) {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(ms));
    Settle();
  }

  void Disconnect() {
    if (client_fd_ >= 0) close(client_fd_);
    client_fd_ = -1;
    Settle();
  }

 private:
  void Connect() {
    Disconnect();
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return;
    asio::ip::tcp::socket socket(io_);
    asio::error_code ec;
    socket.assign(asio::ip::tcp::v4(), fds[0], ec);
    if (ec) {
      close(fds[0]);
      close(fds[1]);
      return;
    }
    fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    client_fd_ = fds[1];
    connection_ = std::make_shared<Connection>(
        Stream(std::move(socket)), SecurityProtocol::kPlaintext,
        next_connection_id_++, ConnectionLimits{}, state_->shared_frames(),
        [this](std::shared_ptr<Connection> c, SharedBuffer frame, size_t size,
               uint64_t slot) {
          DispatchRequest(*state_, c, std::move(frame), size, slot);
        },
        [](uint64_t) {});
    connection_->Start();
  }

  // Writes all of `data` to the broker, letting it read when the socket is
  // full; gives up if the broker stops reading (it closed, or it paused the
  // connection and wants its responses read first, which Drain does).
  void Write(const uint8_t* data, size_t size) {
    for (int stalls = 0; size > 0 && client_fd_ >= 0 && stalls < 16;) {
      ssize_t n = send(client_fd_, data, size, MSG_NOSIGNAL);
      if (n > 0) {
        data += n;
        size -= static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return;
      ++stalls;
      Settle();
    }
  }

  // Reads and drops whatever responses are waiting.
  void Drain() {
    char buf[65536];
    while (client_fd_ >= 0 && recv(client_fd_, buf, sizeof buf, 0) > 0) {
    }
  }

  // Runs the loop until nothing is ready (bounded: a timer due every few
  // milliseconds keeps the loop busy).
  void Settle() {
    for (int round = 0; round < kMaxSettleRounds; ++round) {
      Drain();
      io_.restart();
      if (io_.poll() == 0) break;
    }
    Drain();
  }

  asio::io_context io_;
  Faults faults_;
  std::unique_ptr<BrokerState> state_;
  std::shared_ptr<Connection> connection_;
  int client_fd_ = -1;
  uint64_t next_connection_id_ = 1;
};

}  // namespace
}  // namespace exactly::broker

// EXACTLY_FUZZ_LOG=1 prints the broker's log with every request, to see what
// an input (a crash found, a seed) does.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const bool log = std::getenv("EXACTLY_FUZZ_LOG") != nullptr;
  exactly::broker::SetLoggingOff(!log);
  exactly::broker::SetVerboseLogging(log);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  exactly::broker::SeedMemberIdsForFuzzing(1);
  exactly::broker::FuzzSession session;
  if (!session.ok()) return 0;
  for (int step = 0; step < exactly::broker::kMaxSteps && size >= 3; ++step) {
    const uint8_t op = data[0] % 8;
    const size_t length = (static_cast<size_t>(data[1]) << 8) | data[2];
    data += 3;
    size -= 3;
    if (op == 5) {
      session.Wait(static_cast<int>(length % 12));
      continue;
    }
    if (op == 6) {
      session.Disconnect();
      continue;
    }
    const size_t n = length < size ? length : size;
    if (op == 7) {
      session.SendRaw(data, n);
    } else {
      session.SendFrame(data, n);
    }
    data += n;
    size -= n;
  }
  return 0;
}
