// The durable forms of the group coordinator's state, as values in the store
// (keys in storage/keys.h): a committed offset ('G'), a pending transactional
// offset ('Q') and a group's membership record ('g'). Each value names its
// group, topic and partition itself, so loading never parses keys.
#ifndef EXACTLY_BROKER_GROUP_RECORDS_H_
#define EXACTLY_BROKER_GROUP_RECORDS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "group/group.h"
#include "group/offsets.h"

namespace exactly::broker {

struct OffsetRecord {
  std::string group;
  TopicPartition tp;
  OffsetAndMetadata offset;
  // For a pending transactional offset ('Q'); -1 for a committed one.
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};

std::string EncodeOffsetRecord(const OffsetRecord& record);
absl::StatusOr<OffsetRecord> DecodeOffsetRecord(std::string_view bytes);

std::string EncodeGroupRecord(const GroupRecord& record);
absl::StatusOr<GroupRecord> DecodeGroupRecord(std::string_view bytes);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_GROUP_RECORDS_H_
