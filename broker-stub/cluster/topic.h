// Topics on this broker: names, ids, partitions and configs.
#ifndef EXACTLY_BROKER_CLUSTER_TOPIC_H_
#define EXACTLY_BROKER_CLUSTER_TOPIC_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/partition.h"
#include "cluster/topic_config.h"

namespace exactly::broker {

struct Topic {
  std::string name;
  uint32_t id = 0;  // the store's key prefix; never reused, so a re-created
                    // topic starts clean
  TopicConfig config;
  std::vector<std::unique_ptr<Partition>> partitions;

  Partition* partition(int32_t index) {
    if (index < 0 || index >= static_cast<int32_t>(partitions.size()))
      return nullptr;
    return partitions[static_cast<size_t>(index)].get();
  }
  int32_t partition_count() const {
    return static_cast<int32_t>(partitions.size());
  }
};

// Kafka's rule for topic names: 1-249 characters of [a-zA-Z0-9._-], not "." or
// "..".
absl::Status ValidateTopicName(std::string_view name);

class TopicRegistry {
 public:
  Topic* Find(std::string_view name);
  const std::map<std::string, std::unique_ptr<Topic>, std::less<>>& all()
      const {
    return topics_;
  }
  // Adds a topic with `partitions` empty partitions.
  Topic& Add(std::string name, uint32_t id, int32_t partitions,
             TopicConfig config);
  // Adds partitions up to `total`.
  void Grow(Topic& topic, int32_t total);
  void Remove(std::string_view name);
  // The values every topic inherits from the broker's dynamic configs: given
  // to every topic now and to each one added later.
  void SetInherited(TopicConfig::Inherited inherited);
  const TopicConfig::Inherited& inherited() const { return inherited_; }

 private:
  std::map<std::string, std::unique_ptr<Topic>, std::less<>> topics_;
  TopicConfig::Inherited inherited_;
};

// The durable form of a topic's definition (not its data).
std::string SerializeTopic(const Topic& topic);
struct TopicRecord {
  uint32_t id = 0;
  int32_t partitions = 0;
  std::map<std::string, std::string> configs;
};
absl::StatusOr<TopicRecord> DeserializeTopic(std::string_view bytes);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_TOPIC_H_
