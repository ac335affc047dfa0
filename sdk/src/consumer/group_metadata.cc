#include "exactly/group_metadata.h"

#include <librdkafka/rdkafka.h>

#include <utility>

namespace exactly {

ConsumerGroupMetadata ConsumerGroupMetadata::ForGroup(
    const std::string& group_id) {
  return ConsumerGroupMetadata(
      rd_kafka_consumer_group_metadata_new(group_id.c_str()));
}

ConsumerGroupMetadata::ConsumerGroupMetadata(
    ConsumerGroupMetadata&& other) noexcept
    : metadata_(std::exchange(other.metadata_, nullptr)) {}

ConsumerGroupMetadata& ConsumerGroupMetadata::operator=(
    ConsumerGroupMetadata&& other) noexcept {
  if (this != &other) {
    if (metadata_ != nullptr) {
      rd_kafka_consumer_group_metadata_destroy(metadata_);
    }
    metadata_ = std::exchange(other.metadata_, nullptr);
  }
  return *this;
}

ConsumerGroupMetadata::~ConsumerGroupMetadata() {
  if (metadata_ != nullptr) rd_kafka_consumer_group_metadata_destroy(metadata_);
}

}  // namespace exactly
