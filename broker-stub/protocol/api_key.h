// Kafka API keys and their names, as numbered in Apache Kafka's message
// definitions.
#ifndef EXACTLY_BROKER_PROTOCOL_API_KEY_H_
#define EXACTLY_BROKER_PROTOCOL_API_KEY_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace exactly::protocol {

enum class ApiKey : int16_t {
  kProduce = 0,
  kFetch = 1,
  kListOffsets = 2,
  kMetadata = 3,
  kOffsetCommit = 8,
  kOffsetFetch = 9,
  kFindCoordinator = 10,
  kJoinGroup = 11,
  kHeartbeat = 12,
  kLeaveGroup = 13,
  kSyncGroup = 14,
  kDescribeGroups = 15,
  kListGroups = 16,
  kSaslHandshake = 17,
  kApiVersions = 18,
  kCreateTopics = 19,
  kDeleteTopics = 20,
  kDeleteRecords = 21,
  kInitProducerId = 22,
  kOffsetForLeaderEpoch = 23,
  kAddPartitionsToTxn = 24,
  kAddOffsetsToTxn = 25,
  kEndTxn = 26,
  kWriteTxnMarkers = 27,
  kTxnOffsetCommit = 28,
  kDescribeAcls = 29,
  kCreateAcls = 30,
  kDeleteAcls = 31,
  kDescribeConfigs = 32,
  kAlterConfigs = 33,
  kSaslAuthenticate = 36,
  kCreatePartitions = 37,
  kDeleteGroups = 42,
  kIncrementalAlterConfigs = 44,
  kOffsetDelete = 47,
  kDescribeUserScramCredentials = 50,
  kAlterUserScramCredentials = 51,
  kDescribeCluster = 60,
  kDescribeProducers = 61,
  kDescribeTransactions = 65,
  kListTransactions = 66,
};

// "Produce", "Fetch", ...; "Unknown" for a key this file does not name.
std::string_view ApiKeyName(ApiKey key);
inline std::string_view ApiKeyName(int16_t key) {
  return ApiKeyName(static_cast<ApiKey>(key));
}

// The key named `name` ("Produce", as ApiKeyName spells it), if there is one.
std::optional<ApiKey> ApiKeyFromName(std::string_view name);

// The first version of `key` that uses the flexible encoding (compact strings
// and arrays, tagged fields, request header v2), per Kafka's message JSON;
// INT16_MAX when none is known.
int16_t FirstFlexibleVersion(ApiKey key);

inline bool IsFlexible(ApiKey key, int16_t version) {
  return version >= FirstFlexibleVersion(key);
}

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_API_KEY_H_
