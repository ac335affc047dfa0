#include "protocol/api_key.h"

#include <limits>

namespace exactly::protocol {

namespace {

struct ApiKeyInfo {
  ApiKey key;
  std::string_view name;
  int16_t first_flexible_version;
};

constexpr int16_t kNever = std::numeric_limits<int16_t>::max();

// First flexible versions are from Apache Kafka 3.4's
// clients/.../message/*Request.json.
constexpr ApiKeyInfo kApiKeys[] = {
    {ApiKey::kProduce, "Produce", 9},
    {ApiKey::kFetch, "Fetch", 12},
    {ApiKey::kListOffsets, "ListOffsets", 6},
    {ApiKey::kMetadata, "Metadata", 9},
    {ApiKey::kOffsetCommit, "OffsetCommit", 8},
    {ApiKey::kOffsetFetch, "OffsetFetch", 6},
    {ApiKey::kFindCoordinator, "FindCoordinator", 3},
    {ApiKey::kJoinGroup, "JoinGroup", 6},
    {ApiKey::kHeartbeat, "Heartbeat", 4},
    {ApiKey::kLeaveGroup, "LeaveGroup", 4},
    {ApiKey::kSyncGroup, "SyncGroup", 4},
    {ApiKey::kDescribeGroups, "DescribeGroups", 5},
    {ApiKey::kListGroups, "ListGroups", 3},
    {ApiKey::kSaslHandshake, "SaslHandshake", kNever},
    {ApiKey::kApiVersions, "ApiVersions", 3},
    {ApiKey::kCreateTopics, "CreateTopics", 5},
    {ApiKey::kDeleteTopics, "DeleteTopics", 4},
    {ApiKey::kDeleteRecords, "DeleteRecords", 2},
    {ApiKey::kInitProducerId, "InitProducerId", 2},
    {ApiKey::kOffsetForLeaderEpoch, "OffsetForLeaderEpoch", 4},
    {ApiKey::kAddPartitionsToTxn, "AddPartitionsToTxn", 3},
    {ApiKey::kAddOffsetsToTxn, "AddOffsetsToTxn", 3},
    {ApiKey::kEndTxn, "EndTxn", 3},
    {ApiKey::kWriteTxnMarkers, "WriteTxnMarkers", 1},
    {ApiKey::kTxnOffsetCommit, "TxnOffsetCommit", 3},
    {ApiKey::kDescribeAcls, "DescribeAcls", 2},
    {ApiKey::kCreateAcls, "CreateAcls", 2},
    {ApiKey::kDeleteAcls, "DeleteAcls", 2},
    {ApiKey::kDescribeConfigs, "DescribeConfigs", 4},
    {ApiKey::kAlterConfigs, "AlterConfigs", 2},
    {ApiKey::kSaslAuthenticate, "SaslAuthenticate", 2},
    {ApiKey::kCreatePartitions, "CreatePartitions", 2},
    {ApiKey::kDeleteGroups, "DeleteGroups", 2},
    {ApiKey::kIncrementalAlterConfigs, "IncrementalAlterConfigs", 1},
    {ApiKey::kOffsetDelete, "OffsetDelete", kNever},
    {ApiKey::kDescribeUserScramCredentials, "DescribeUserScramCredentials", 0},
    {ApiKey::kAlterUserScramCredentials, "AlterUserScramCredentials", 0},
    {ApiKey::kDescribeCluster, "DescribeCluster", 0},
    {ApiKey::kDescribeProducers, "DescribeProducers", 0},
    {ApiKey::kDescribeTransactions, "DescribeTransactions", 0},
    {ApiKey::kListTransactions, "ListTransactions", 0},
};

const ApiKeyInfo* Find(ApiKey key) {
  for (const ApiKeyInfo& info : kApiKeys) {
    if (info.key == key) return &info;
  }
  return nullptr;
}

}  // namespace

std::string_view ApiKeyName(ApiKey key) {
  const ApiKeyInfo* info = Find(key);
  return info == nullptr ? "Unknown" : info->name;
}

std::optional<ApiKey> ApiKeyFromName(std::string_view name) {
  for (const ApiKeyInfo& info : kApiKeys) {
    if (info.name == name) return info.key;
  }
  return std::nullopt;
}

int16_t FirstFlexibleVersion(ApiKey key) {
  const ApiKeyInfo* info = Find(key);
  return info == nullptr ? kNever : info->first_flexible_version;
}

}  // namespace exactly::protocol
