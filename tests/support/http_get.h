// A plain HTTP/1.0 GET over a socket, for tests that scrape an endpoint the
// way Prometheus does, without an HTTP library.
#ifndef EXACTLY_TESTS_SUPPORT_HTTP_GET_H_
#define EXACTLY_TESTS_SUPPORT_HTTP_GET_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>

namespace exactly::testing {

// The body of GET http://127.0.0.1:port/path when the status is 200;
// nullopt otherwise (no connection, another status, 5 s without an answer).
inline std::optional<std::string> HttpGet(uint16_t port,
                                          const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return std::nullopt;
  }
  // HTTP/1.0: the server closes the connection after the body.
  const std::string request =
      "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return std::nullopt;
  }
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;)
    response.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || body == std::string::npos ||
      response.compare(9, 3, "200") != 0)
    return std::nullopt;
  return response.substr(body + 4);
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_HTTP_GET_H_
