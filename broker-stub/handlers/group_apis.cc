// The group APIs and the versions this broker advertises for them: every
// version of each, as Apache Kafka 3.4 defines them.
#include "handlers/api_table.h"
#include "handlers/decoded.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

std::vector<ApiHandler> GroupApis() {
  using namespace protocol;  // NOLINT: the message types, in one table
  return {
      {ApiKey::kFindCoordinator, 0, 4,
       &Decoded<FindCoordinatorRequest, HandleFindCoordinator>},
      {ApiKey::kJoinGroup, 0, 9, &Decoded<JoinGroupRequest, HandleJoinGroup>},
      {ApiKey::kSyncGroup, 0, 5, &Decoded<SyncGroupRequest, HandleSyncGroup>},
      {ApiKey::kHeartbeat, 0, 4, &Decoded<HeartbeatRequest, HandleHeartbeat>},
      {ApiKey::kLeaveGroup, 0, 5,
       &Decoded<LeaveGroupRequest, HandleLeaveGroup>},
      {ApiKey::kOffsetCommit, 0, 8,
       &Decoded<OffsetCommitRequest, HandleOffsetCommit>},
      {ApiKey::kOffsetFetch, 0, 8,
       &Decoded<OffsetFetchRequest, HandleOffsetFetch>},
      {ApiKey::kDescribeGroups, 0, 5,
       &Decoded<DescribeGroupsRequest, HandleDescribeGroups>},
      {ApiKey::kListGroups, 0, 5,
       &Decoded<ListGroupsRequest, HandleListGroups>},
      {ApiKey::kDeleteGroups, 0, 2,
       &Decoded<DeleteGroupsRequest, HandleDeleteGroups>},
      {ApiKey::kOffsetDelete, 0, 0,
       &Decoded<OffsetDeleteRequest, HandleOffsetDelete>},
      // The group side of transactions: offsets held until the transaction
      // coordinator ends the transaction (GroupCoordinator::
      // CompleteTxnOffsets).
      {ApiKey::kTxnOffsetCommit, 0, 3,
       &Decoded<TxnOffsetCommitRequest, HandleTxnOffsetCommit>},
  };
}

}  // namespace exactly::broker
