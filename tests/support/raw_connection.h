// A blocking TCP connection that speaks raw Kafka frames, for tests that send
// the broker what no well-behaved client would.
#ifndef EXACTLY_TESTS_SUPPORT_RAW_CONNECTION_H_
#define EXACTLY_TESTS_SUPPORT_RAW_CONNECTION_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>

namespace exactly::testing {

class RawConnection {
 public:
  explicit RawConnection(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }  // for a test that drives the socket itself

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n =
          ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads one response frame (without its size prefix); nullopt when the broker
  // closed the connection or nothing came within `timeout_ms`.
  std::optional<std::string> ReadFrame(int timeout_ms = 5000) {
    std::string size_bytes;
    if (!ReadExactly(4, timeout_ms, &size_bytes)) return std::nullopt;
    uint32_t size = (static_cast<uint8_t>(size_bytes[0]) << 24) |
                    (static_cast<uint8_t>(size_bytes[1]) << 16) |
                    (static_cast<uint8_t>(size_bytes[2]) << 8) |
                    static_cast<uint8_t>(size_bytes[3]);
    std::string frame;
    if (!ReadExactly(size, timeout_ms, &frame)) return std::nullopt;
    return frame;
  }

  // Whether the broker closed the connection (EOF) within `timeout_ms`.
  bool ClosedByPeer(int timeout_ms = 5000) {
    std::string ignored;
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, timeout_ms) <= 0) return false;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return true;
    }
  }

 private:
  bool ReadExactly(size_t n, int timeout_ms, std::string* out) {
    out->clear();
    while (out->size() < n) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, timeout_ms) <= 0) return false;
      char buf[65536];
      size_t want = std::min(sizeof buf, n - out->size());
      ssize_t got = ::recv(fd_, buf, want, 0);
      if (got <= 0) return false;
      out->append(buf, static_cast<size_t>(got));
    }
    return true;
  }

  int fd_ = -1;
};

// The 4-byte big-endian size prefix of a frame of `size` bytes (or any int32,
// for lying).
inline std::string SizePrefix(int32_t size) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i)
    s[i] = static_cast<char>(static_cast<uint32_t>(size) >> (24 - 8 * i));
  return s;
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_RAW_CONNECTION_H_
