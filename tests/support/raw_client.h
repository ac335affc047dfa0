// A blocking client that sends typed Kafka requests (the broker's own message
// structs) over one connection and decodes the answers: for tests that need a
// request no librdkafka version sends, or a client that misbehaves on purpose.
#ifndef EXACTLY_TESTS_SUPPORT_RAW_CLIENT_H_
#define EXACTLY_TESTS_SUPPORT_RAW_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"

namespace exactly::testing {

class RawClient {
 public:
  explicit RawClient(uint16_t port, std::string client_id = "raw-client")
      : client_id_(std::move(client_id)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{30, 0};  // a broken broker fails the test, not hangs it
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ =
        connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawClient() { close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  template <class Req>
  void Send(const Req& request, int16_t version) {
    protocol::RequestHeader h;
    h.api_key = static_cast<int16_t>(Req::kApiKey);
    h.api_version = version;
    h.correlation_id = ++correlation_;
    h.client_id = client_id_;
    std::string frame = protocol::EncodeRequestFrame(h, request);
    ASSERT_TRUE(connected_);
    ASSERT_EQ(write(fd_, frame.data(), frame.size()),
              static_cast<ssize_t>(frame.size()));
  }

  // The answer to the last request sent (one request in flight at a time);
  // an error when the connection closed, 30 s passed, or the answer is to
  // another request.
  template <class Resp>
  absl::StatusOr<Resp> Receive(int16_t version) {
    std::string size_bytes = ReadExactly(4);
    if (size_bytes.size() != 4) return absl::UnavailableError("closed");
    uint32_t size = 0;
    for (char c : size_bytes) size = (size << 8) | static_cast<uint8_t>(c);
    std::string body = ReadExactly(size);
    if (body.size() != size) return absl::UnavailableError("closed");
    std::string_view rest = body;
    absl::StatusOr<int32_t> correlation =
        protocol::ParseResponseHeader(Resp::kApiKey, version, &rest);
    if (!correlation.ok()) return correlation.status();
    if (*correlation != correlation_) {
      return absl::InternalError("an answer to another request");
    }
    return protocol::DecodeMessage<Resp>(rest, version);
  }

  // Sends and waits for the answer; a failure to get one fails the test.
  template <class Resp, class Req>
  Resp Call(const Req& request, int16_t version) {
    Send(request, version);
    absl::StatusOr<Resp> response = Receive<Resp>(version);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : Resp{};
  }

 private:
  std::string ReadExactly(size_t n) {
    std::string out(n, '\0');
    size_t got = 0;
    while (got < n) {
      ssize_t r = read(fd_, out.data() + got, n - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    out.resize(got);
    return out;
  }

  std::string client_id_;
  int fd_ = -1;
  bool connected_ = false;
  int32_t correlation_ = 0;
};

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_RAW_CLIENT_H_
