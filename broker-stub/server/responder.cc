#include "server/responder.h"

#include "server/connection.h"

namespace exactly::broker {

Responder::Responder(std::weak_ptr<Connection> connection, uint64_t slot,
                     const protocol::RequestHeader& header)
    : connection_(std::move(connection)),
      slot_(slot),
      api_key_(header.api_key),
      version_(header.api_version),
      correlation_id_(header.correlation_id) {}

Responder::Responder(Responder&& other) noexcept { *this = std::move(other); }

std::string_view Responder::listener() const {
  std::shared_ptr<Connection> c = connection_.lock();
  return c ? c->session().listener() : std::string_view();
}

std::string Responder::principal() const {
  std::shared_ptr<Connection> c = connection_.lock();
  return c ? c->session().principal() : std::string();
}

Responder& Responder::operator=(Responder&& other) noexcept {
  if (this == &other) return *this;
  connection_ = std::move(other.connection_);
  slot_ = other.slot_;
  api_key_ = other.api_key_;
  version_ = other.version_;
  correlation_id_ = other.correlation_id_;
  delay_ms_ = other.delay_ms_;
  answered_ = other.answered_;
  other.answered_ = true;  // the moved-from responder owes nothing
  other.connection_.reset();
  return *this;
}

Responder::~Responder() {
  if (!answered_)
    CloseConnection("internal error: a request was left unanswered");
}

std::string Responder::peer() const {
  auto c = connection_.lock();
  return c ? c->peer() : std::string();
}

void Responder::SendFrame(ResponseFrame frame) {
  if (answered_) return;
  answered_ = true;
  if (auto c = connection_.lock())
    c->Complete(slot_, std::move(frame), true, delay_ms_);
}

void Responder::SendNothing() {
  if (answered_) return;
  answered_ = true;
  if (auto c = connection_.lock())
    c->Complete(slot_, ResponseFrame(), false, delay_ms_);
}

void Responder::CloseConnection(std::string_view reason) {
  if (answered_) return;
  answered_ = true;
  if (auto c = connection_.lock()) c->Close(reason);
}

}  // namespace exactly::broker
