// Bytes received once and kept by whoever needs them: a request frame is read
// into one of these, and the batches a Produce appends keep pointing into it
// instead of being copied.
#ifndef EXACTLY_BROKER_UTIL_SHARED_BUFFER_H_
#define EXACTLY_BROKER_UTIL_SHARED_BUFFER_H_

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace exactly::broker {

using SharedBuffer = std::shared_ptr<char[]>;

// A buffer of `size` bytes, not zero-filled (it is about to be overwritten).
inline SharedBuffer NewSharedBuffer(size_t size) {
  return SharedBuffer(new char[size]);
}

inline SharedBuffer CopyToSharedBuffer(std::string_view bytes) {
  SharedBuffer b = NewSharedBuffer(bytes.size());
  std::memcpy(b.get(), bytes.data(), bytes.size());
  return b;
}

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_UTIL_SHARED_BUFFER_H_
