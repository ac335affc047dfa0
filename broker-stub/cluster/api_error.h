// A Kafka error code with a message: what a broker operation that may fail
// returns, ready to be written into a response.
#ifndef EXACTLY_BROKER_CLUSTER_API_ERROR_H_
#define EXACTLY_BROKER_CLUSTER_API_ERROR_H_

#include <optional>
#include <string>

#include "protocol/error_code.h"

namespace exactly::broker {

struct ApiError {
  protocol::ErrorCode code = protocol::ErrorCode::kNone;
  std::string message;

  bool ok() const { return code == protocol::ErrorCode::kNone; }
  int16_t code_value() const { return static_cast<int16_t>(code); }
  // The message as the nullable ErrorMessage fields of responses carry it.
  std::optional<std::string> message_or_null() const {
    if (ok()) return std::nullopt;
    return message;
  }
};

inline ApiError Error(protocol::ErrorCode code, std::string message = {}) {
  return ApiError{code, std::move(message)};
}

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_API_ERROR_H_
