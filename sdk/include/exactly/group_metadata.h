// A consumer's group membership (group id, generation, member id) as the
// transaction coordinator needs it: offsets sent with it are refused if the
// consumer has since lost its partitions, which fences zombie processors.
#ifndef EXACTLY_GROUP_METADATA_H_
#define EXACTLY_GROUP_METADATA_H_

#include <string>

struct rd_kafka_consumer_group_metadata_s;

namespace exactly {

class ConsumerGroupMetadata {
 public:
  // Metadata for `group_id` with no generation: offsets sent with it are not
  // fenced. Prefer Consumer::GroupMetadata().
  static ConsumerGroupMetadata ForGroup(const std::string& group_id);

  // Takes ownership.
  explicit ConsumerGroupMetadata(rd_kafka_consumer_group_metadata_s* metadata)
      : metadata_(metadata) {}
  ConsumerGroupMetadata(ConsumerGroupMetadata&& other) noexcept;
  ConsumerGroupMetadata& operator=(ConsumerGroupMetadata&& other) noexcept;
  ConsumerGroupMetadata(const ConsumerGroupMetadata&) = delete;
  ConsumerGroupMetadata& operator=(const ConsumerGroupMetadata&) = delete;
  ~ConsumerGroupMetadata();

  const rd_kafka_consumer_group_metadata_s* native_handle() const {
    return metadata_;
  }

 private:
  rd_kafka_consumer_group_metadata_s* metadata_;
};

}  // namespace exactly

#endif  // EXACTLY_GROUP_METADATA_H_
