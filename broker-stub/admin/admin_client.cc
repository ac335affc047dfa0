#include "admin/admin_client.h"

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read_until.hpp>
#include <asio/streambuf.hpp>
#include <asio/write.hpp>
#include <cstdio>
#include <istream>
#include <string>

namespace exactly::broker {

int AdminClientMain(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: exactly-broker admin HOST:PORT COMMAND [key=value...]\n");
    return 2;
  }
  std::string address = argv[0];
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "exactly-broker admin: expected HOST:PORT, got %s\n", address.c_str());
    return 2;
  }
  std::string line;
  for (int i = 1; i < argc; ++i) {
    if (i > 1) line += ' ';
    line += argv[i];
  }
  try {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    asio::ip::tcp::resolver resolver(io);
    asio::connect(socket, resolver.resolve(address.substr(0, colon), address.substr(colon + 1)));
    asio::write(socket, asio::buffer(line + "\n"));
    asio::streambuf input;
    std::istream in(&input);
    std::string reply;
    asio::read_until(socket, input, '\n');
    std::getline(in, reply);
    std::printf("%s\n", reply.c_str());
    // A multi-line reply (history) ends with "end".
    if (reply.rfind("ok ", 0) == 0 && line == "history") {
      for (;;) {
        if (input.size() == 0) asio::read_until(socket, input, '\n');
        std::string more;
        std::getline(in, more);
        if (more == "end") break;
        std::printf("%s\n", more.c_str());
      }
    }
    return reply.rfind("ok", 0) == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exactly-broker admin: %s\n", e.what());
    return 1;
  }
}

}  // namespace exactly::broker
