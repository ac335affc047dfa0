// The one way a handler answers a request. A Responder is bound to a request's
// place in its connection's response order; handlers that must wait (long-poll
// fetch, a commit, a group join) move it into whatever they park. Answering
// twice is impossible (the first answer consumes it); dropping it unanswered
// closes the connection, so a forgotten response cannot leave a client hanging.
#ifndef EXACTLY_BROKER_SERVER_RESPONDER_H_
#define EXACTLY_BROKER_SERVER_RESPONDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/request_header.h"
#include "protocol/serde.h"
#include "server/response_frame.h"

namespace exactly::broker {

class Connection;

class Responder {
 public:
  Responder(std::weak_ptr<Connection> connection, uint64_t slot,
            const protocol::RequestHeader& header);
  Responder(Responder&& other) noexcept;
  Responder& operator=(Responder&& other) noexcept;
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;
  ~Responder();

  int16_t api_key() const { return api_key_; }
  int16_t version() const { return version_; }
  int32_t correlation_id() const { return correlation_id_; }
  // The client's address, "host:port" ("" once the connection is gone).
  std::string peer() const;
  // The listener the request came through ("PLAINTEXT", "SASL_SSL", ...):
  // the endpoints a Metadata or FindCoordinator answer names are its.
  std::string_view listener() const;
  // Who sent it: "User:alice", or "User:ANONYMOUS" ("" once the connection
  // is gone).
  std::string principal() const;
  // The connection itself (null once gone): the SASL handlers change its
  // session.
  std::shared_ptr<Connection> connection() const { return connection_.lock(); }
  // Holds the response back by this much once it is ready (injected latency).
  void set_delay_ms(int32_t delay_ms) { delay_ms_ = delay_ms; }

  // Encodes `body` at the request's version and queues it behind earlier
  // responses. Records that carry their owners (a Fetch response's batches)
  // are spliced into the write rather than copied into the frame.
  template <class M>
  void Send(const M& body) {
    ResponseFrame frame;
    frame.bytes.resize(protocol::kFrameSizePrefix);
    protocol::EncodeResponseHeader(correlation_id_,
                                   static_cast<protocol::ApiKey>(api_key_),
                                   version_, &frame.bytes);
    protocol::Encoder encoder(
        &frame.bytes, version_,
        protocol::IsFlexible(static_cast<protocol::ApiKey>(api_key_), version_),
        &frame.splices);
    const_cast<M&>(body).Serde(encoder);
    SendFrame(std::move(frame));
  }

  // Like Send, with the body encoded at a version other than the request's
  // (ApiVersions answers an unsupported version in v0).
  void SendFrame(std::string frame) {
    SendFrame(ResponseFrame(std::move(frame)));
  }
  void SendFrame(ResponseFrame frame);

  // For requests that get no response (Produce with acks=0).
  void SendNothing();

  // Closes the connection instead of answering (malformed requests, injected
  // faults).
  void CloseConnection(std::string_view reason);

 private:
  std::weak_ptr<Connection> connection_;
  uint64_t slot_ = 0;
  int16_t api_key_ = 0;
  int16_t version_ = 0;
  int32_t correlation_id_ = 0;
  int32_t delay_ms_ = 0;
  bool answered_ = false;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_SERVER_RESPONDER_H_
