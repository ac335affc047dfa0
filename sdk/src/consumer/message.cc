#include "exactly/message.h"

#include <librdkafka/rdkafka.h>

#include <utility>

namespace exactly {

Message::Message(Message&& other) noexcept
    : message_(std::exchange(other.message_, nullptr)) {}

Message& Message::operator=(Message&& other) noexcept {
  if (this != &other) {
    if (message_ != nullptr) rd_kafka_message_destroy(message_);
    message_ = std::exchange(other.message_, nullptr);
  }
  return *this;
}

Message::~Message() {
  if (message_ != nullptr) rd_kafka_message_destroy(message_);
}

std::string_view Message::topic() const {
  return rd_kafka_topic_name(message_->rkt);
}

int32_t Message::partition() const { return message_->partition; }

int64_t Message::offset() const { return message_->offset; }

TopicPartition Message::topic_partition() const {
  return {std::string(topic()), partition()};
}

std::string_view Message::key() const {
  if (message_->key == nullptr) return {};
  return {static_cast<const char*>(message_->key), message_->key_len};
}

std::string_view Message::value() const {
  if (message_->payload == nullptr) return {};
  return {static_cast<const char*>(message_->payload), message_->len};
}

bool Message::has_key() const { return message_->key != nullptr; }

bool Message::has_value() const { return message_->payload != nullptr; }

int64_t Message::timestamp_ms() const {
  return rd_kafka_message_timestamp(message_, nullptr);
}

std::vector<Header> Message::headers() const {
  std::vector<Header> out;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(message_, &headers) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return out;
  }
  const char* name = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  for (size_t i = 0;
       rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
       RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    out.push_back(
        {name, value == nullptr
                   ? std::string_view()
                   : std::string_view(static_cast<const char*>(value), size)});
  }
  return out;
}

std::optional<std::string_view> Message::header(std::string_view key) const {
  std::optional<std::string_view> found;
  for (const Header& h : headers()) {
    if (h.key == key) found = h.value;
  }
  return found;
}

}  // namespace exactly
