// A consumed record. It owns librdkafka's message (no copy of key or value),
// so it must be destroyed before the Consumer that returned it.
#ifndef EXACTLY_MESSAGE_H_
#define EXACTLY_MESSAGE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "exactly/record.h"

struct rd_kafka_message_s;

namespace exactly {

class Message {
 public:
  // Takes ownership of a message librdkafka returned without error.
  explicit Message(rd_kafka_message_s* message) : message_(message) {}
  Message(Message&& other) noexcept;
  Message& operator=(Message&& other) noexcept;
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  ~Message();

  std::string_view topic() const;
  int32_t partition() const;
  int64_t offset() const;
  TopicPartition topic_partition() const;
  // Null keys and values read as empty; has_key()/has_value() tell them
  // apart (a null value is a tombstone).
  std::string_view key() const;
  std::string_view value() const;
  bool has_key() const;
  bool has_value() const;
  int64_t timestamp_ms() const;  // -1 if the record has none
  std::vector<Header> headers() const;
  // The value of the last header named `key`, if any.
  std::optional<std::string_view> header(std::string_view key) const;

  rd_kafka_message_s* native_handle() const { return message_; }

 private:
  rd_kafka_message_s* message_;
};

}  // namespace exactly

#endif  // EXACTLY_MESSAGE_H_
