// One client connection: reads size-prefixed request frames, hands each to the
// dispatcher, and writes responses strictly in request order, as Kafka clients
// require, even when a later request is answered before an earlier one that
// waits (a long-poll fetch).
#ifndef EXACTLY_BROKER_SERVER_CONNECTION_H_
#define EXACTLY_BROKER_SERVER_CONNECTION_H_

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "security/session.h"
#include "server/responder.h"
#include "server/response_frame.h"
#include "server/stream.h"
#include "util/frame_arena.h"
#include "util/shared_buffer.h"

namespace exactly::broker {

// What one connection may tie up.
struct ConnectionLimits {
  // Frames larger than this are refused (the connection closed) before any
  // memory is allocated for them.
  int64_t max_frame_bytes = 100 << 20;
  // Bytes of requests read and not yet answered: past this the connection
  // stops reading until answers drain (a client that stops reading its
  // responses stalls itself, not the broker).
  int64_t max_in_flight_request_bytes = 100 << 20;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Called with each complete request: `frame` holds its `size` bytes (size
  // prefix removed); `slot` is its place in the response order.
  using RequestFn =
      std::function<void(std::shared_ptr<Connection>, SharedBuffer frame,
                         size_t size, uint64_t slot)>;
  // Called once when the connection closes.
  using ClosedFn = std::function<void(uint64_t id)>;

  // Request frames are read into memory from `arena`, shared with the other
  // connections of the same server.
  // `stream` is plain TCP or TLS as the listener's `protocol` says; a TLS
  // connection shakes hands before its first request is read.
  Connection(Stream stream, SecurityProtocol protocol, uint64_t id,
             const ConnectionLimits& limits, std::shared_ptr<FrameArena> arena,
             RequestFn on_request, ClosedFn on_closed);
  ~Connection();

  void Start();
  uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  bool closed() const { return closed_; }
  // The listener this client came through and who it is.
  Session& session() { return session_; }

  // The response for `slot`: a whole frame (size prefix included, filled in
  // here), or nothing for a request without a response. `delay_ms` holds it
  // back (injected latency).
  void Complete(uint64_t slot, ResponseFrame frame, bool has_response,
                int32_t delay_ms);
  void Close(std::string_view reason);
  // Closes once every response queued so far is written (after a failed
  // SASL authentication, as Kafka does).
  void CloseAfterResponses(std::string reason);

 private:
  struct Slot {
    uint64_t id;
    size_t request_bytes = 0;  // counted in in_flight_bytes_ until written
    bool ready = false;
    bool has_response = false;
    ResponseFrame frame;
  };

  void ReadSize();
  void ReadBody(uint32_t size);
  void MarkReady(uint64_t slot, ResponseFrame frame, bool has_response);
  void WriteReady();
  void MaybeResumeReading();

  Stream stream_;
  Session session_;
  uint64_t id_;
  ConnectionLimits limits_;
  std::shared_ptr<FrameArena> arena_;
  RequestFn on_request_;
  ClosedFn on_closed_;
  std::string peer_;
  unsigned char size_buf_[4];
  SharedBuffer request_;
  std::deque<Slot> slots_;
  uint64_t next_slot_ = 0;
  size_t in_flight_bytes_ = 0;  // request bytes of slots_
  // The frames being written; they own the bytes the write points at.
  std::vector<ResponseFrame> writing_;
  bool write_in_progress_ = false;
  bool reading_paused_ = false;
  bool closed_ = false;
  std::optional<std::string> close_after_responses_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SERVER_CONNECTION_H_
