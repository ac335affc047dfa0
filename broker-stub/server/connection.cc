#include "server/connection.h"

#include <asio/read.hpp>
#include <asio/write.hpp>

#include "absl/strings/str_cat.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {
// Requests read ahead of their responses on one connection. Past this the
// connection stops reading until responses drain, which bounds the memory a
// pipelining client can tie up.
constexpr size_t kMaxPendingResponses = 64;

// The frame's pieces in wire order: its own bytes, cut where spliced data goes.
void AppendBuffers(const ResponseFrame& frame,
                   std::vector<asio::const_buffer>* out) {
  size_t pos = 0;
  for (const protocol::Splice& s : frame.splices) {
    if (s.at > pos)
      out->push_back(asio::buffer(frame.bytes.data() + pos, s.at - pos));
    out->push_back(asio::buffer(s.data.data(), s.data.size()));
    pos = s.at;
  }
  if (frame.bytes.size() > pos)
    out->push_back(
        asio::buffer(frame.bytes.data() + pos, frame.bytes.size() - pos));
}
}  // namespace

Connection::Connection(Stream stream, SecurityProtocol protocol, uint64_t id,
                       const ConnectionLimits& limits,
                       std::shared_ptr<FrameArena> arena, RequestFn on_request,
                       ClosedFn on_closed)
    : stream_(std::move(stream)),
      session_(protocol),
      id_(id),
      limits_(limits),
      arena_(std::move(arena)),
      on_request_(std::move(on_request)),
      on_closed_(std::move(on_closed)) {
  asio::error_code ec;
  auto endpoint = stream_.socket().remote_endpoint(ec);
  peer_ =
      ec ? "unknown"
         : absl::StrCat(endpoint.address().to_string(), ":", endpoint.port());
  stream_.socket().set_option(asio::ip::tcp::no_delay(true), ec);
}

Connection::~Connection() = default;

void Connection::Start() {
  stream_.AsyncHandshake(
      [self = shared_from_this()](const asio::error_code& ec) {
        if (ec) {
          // A plaintext client on a TLS port ends here ("wrong version
          // number"), as does a client that does not trust the certificate.
          self->Close(absl::StrCat("TLS handshake failed: ", ec.message()));
          return;
        }
        if (self->stream_.is_tls())
          self->session_.SetCertificatePrincipal(self->stream_.PeerSubject());
        self->ReadSize();
      });
}

void Connection::ReadSize() {
  asio::async_read(
      stream_, asio::buffer(size_buf_, sizeof size_buf_),
      [self = shared_from_this()](const asio::error_code& ec, size_t) {
        if (ec) {
          self->Close(ec == asio::error::eof ? "" : ec.message());
          return;
        }
        int32_t size = static_cast<int32_t>(
            (uint32_t{self->size_buf_[0]} << 24) |
            (uint32_t{self->size_buf_[1]} << 16) |
            (uint32_t{self->size_buf_[2]} << 8) | uint32_t{self->size_buf_[3]});
        if (size <= 0 || size > self->limits_.max_frame_bytes) {
          // Refused before anything is allocated for it.
          self->Close(absl::StrCat("refused a frame of ", size,
                                   " bytes (limit ",
                                   self->limits_.max_frame_bytes, ")"));
          return;
        }
        self->ReadBody(static_cast<uint32_t>(size));
      });
}

void Connection::ReadBody(uint32_t size) {
  // Not zero-filled: the socket overwrites every byte.
  request_ = arena_->Allocate(size);
  asio::async_read(
      stream_, asio::buffer(request_.get(), size),
      [self = shared_from_this(), size](const asio::error_code& ec, size_t) {
        if (ec) {
          self->Close(absl::StrCat("truncated frame: ", ec.message()));
          return;
        }
        uint64_t slot = self->next_slot_++;
        self->slots_.push_back(Slot{.id = slot, .request_bytes = size});
        self->in_flight_bytes_ += size;
        self->on_request_(self, std::move(self->request_), size, slot);
        if (self->closed_ || self->close_after_responses_) return;
        if (self->slots_.size() >= kMaxPendingResponses ||
            self->in_flight_bytes_ >=
                static_cast<size_t>(
                    self->limits_.max_in_flight_request_bytes)) {
          self->reading_paused_ = true;
        } else {
          self->ReadSize();
        }
      });
}

void Connection::Complete(uint64_t slot, ResponseFrame frame, bool has_response,
                          int32_t delay_ms) {
  if (closed_) return;
  if (delay_ms <= 0) {
    MarkReady(slot, std::move(frame), has_response);
    return;
  }
  auto timer =
      std::make_shared<asio::steady_timer>(stream_.socket().get_executor());
  timer->expires_after(std::chrono::milliseconds(delay_ms));
  timer->async_wait([self = shared_from_this(), timer, slot,
                     frame = std::move(frame),
                     has_response](const asio::error_code&) mutable {
    self->MarkReady(slot, std::move(frame), has_response);
  });
}

void Connection::MarkReady(uint64_t slot, ResponseFrame frame,
                           bool has_response) {
  if (closed_) return;
  for (Slot& s : slots_) {
    if (s.id != slot) continue;
    s.ready = true;
    s.has_response = has_response;
    s.frame = std::move(frame);
    if (has_response) {
      // The size counts the spliced data too.
      uint32_t size = static_cast<uint32_t>(s.frame.size() - 4);
      for (int i = 0; i < 4; ++i)
        s.frame.bytes[i] = static_cast<char>(size >> (24 - 8 * i));
    }
    break;
  }
  WriteReady();
}

void Connection::WriteReady() {
  if (closed_ || write_in_progress_) return;
  while (!slots_.empty() && slots_.front().ready) {
    if (slots_.front().has_response)
      writing_.push_back(std::move(slots_.front().frame));
    in_flight_bytes_ -= slots_.front().request_bytes;
    slots_.pop_front();
  }
  MaybeResumeReading();
  if (writing_.empty()) {
    if (close_after_responses_ && slots_.empty())
      Close(*close_after_responses_);
    return;
  }
  write_in_progress_ = true;
  std::vector<asio::const_buffer> buffers;
  for (const ResponseFrame& f : writing_) AppendBuffers(f, &buffers);
  asio::async_write(
      stream_, buffers,
      [self = shared_from_this()](const asio::error_code& ec, size_t) {
        self->write_in_progress_ = false;
        self->writing_.clear();
        if (ec) {
          self->Close(ec.message());
          return;
        }
        self->WriteReady();
      });
}

void Connection::MaybeResumeReading() {
  if (reading_paused_ && !closed_ && slots_.size() < kMaxPendingResponses / 2 &&
      in_flight_bytes_ <
          static_cast<size_t>(limits_.max_in_flight_request_bytes) / 2) {
    reading_paused_ = false;
    ReadSize();
  }
}

void Connection::CloseAfterResponses(std::string reason) {
  close_after_responses_ = std::move(reason);
  WriteReady();
}

void Connection::Close(std::string_view reason) {
  if (closed_) return;
  closed_ = true;
  if (!reason.empty())
    LogInfo("closing connection from ", peer_, ": ", std::string(reason));
  asio::error_code ec;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
  slots_.clear();
  if (on_closed_) on_closed_(id_);
}

}  // namespace exactly::broker
