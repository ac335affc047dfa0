// One response as it goes out: the encoded bytes plus record data that was
// referenced rather than copied into them (a Fetch response's batches), so
// that serving a fetch costs no copy of the records on the broker thread.
#ifndef EXACTLY_BROKER_SERVER_RESPONSE_FRAME_H_
#define EXACTLY_BROKER_SERVER_RESPONSE_FRAME_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "protocol/serde.h"

namespace exactly::broker {

struct ResponseFrame {
  ResponseFrame() = default;
  explicit ResponseFrame(std::string b) : bytes(std::move(b)) {}

  // The size prefix, header and body, without the spliced data.
  std::string bytes;
  // In order of `at`; each one's owner keeps its data alive until written.
  std::vector<protocol::Splice> splices;

  // The frame's size on the wire.
  size_t size() const {
    size_t n = bytes.size();
    for (const protocol::Splice& s : splices) n += s.data.size();
    return n;
  }
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SERVER_RESPONSE_FRAME_H_
