// Every API whose messages this broker can decode and encode, in one list, so
// that tests and the fuzzer cover each one without a list of their own.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_ALL_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_ALL_H_

#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/alter_configs.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/create_acls.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_acls.h"
#include "protocol/messages/delete_groups.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/describe_acls.h"
#include "protocol/messages/describe_cluster.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/describe_producers.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/describe_user_scram_credentials.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/incremental_alter_configs.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/list_groups.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/list_transactions.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_delete.h"
#include "protocol/messages/offset_fetch.h"
#include "protocol/messages/offset_for_leader_epoch.h"
#include "protocol/messages/produce.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"
#include "protocol/messages/sync_group.h"
#include "protocol/messages/txn_offset_commit.h"
#include "protocol/messages/write_txn_markers.h"

namespace exactly::protocol {

// Calls f.template operator()<Request, Response>() for every API with message
// structs.
template <class F>
void ForEachMessagePair(F&& f) {
  f.template operator()<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse>();
  f.template
  operator()<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse>();
  f.template operator()<AlterConfigsRequest, AlterConfigsResponse>();
  f.template operator()<AlterUserScramCredentialsRequest,
                        AlterUserScramCredentialsResponse>();
  f.template operator()<ApiVersionsRequest, ApiVersionsResponse>();
  f.template operator()<CreateAclsRequest, CreateAclsResponse>();
  f.template operator()<CreatePartitionsRequest, CreatePartitionsResponse>();
  f.template operator()<CreateTopicsRequest, CreateTopicsResponse>();
  f.template operator()<DeleteAclsRequest, DeleteAclsResponse>();
  f.template operator()<DeleteGroupsRequest, DeleteGroupsResponse>();
  f.template operator()<DeleteRecordsRequest, DeleteRecordsResponse>();
  f.template operator()<DeleteTopicsRequest, DeleteTopicsResponse>();
  f.template operator()<DescribeAclsRequest, DescribeAclsResponse>();
  f.template operator()<DescribeClusterRequest, DescribeClusterResponse>();
  f.template operator()<DescribeConfigsRequest, DescribeConfigsResponse>();
  f.template operator()<DescribeGroupsRequest, DescribeGroupsResponse>();
  f.template operator()<DescribeProducersRequest, DescribeProducersResponse>();
  f.template
  operator()<DescribeTransactionsRequest, DescribeTransactionsResponse>();
  f.template operator()<DescribeUserScramCredentialsRequest,
                        DescribeUserScramCredentialsResponse>();
  f.template operator()<EndTxnRequest, EndTxnResponse>();
  f.template operator()<FetchRequest, FetchResponse>();
  f.template operator()<FindCoordinatorRequest, FindCoordinatorResponse>();
  f.template operator()<HeartbeatRequest, HeartbeatResponse>();
  f.template
  operator()<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>();
  f.template operator()<InitProducerIdRequest, InitProducerIdResponse>();
  f.template operator()<JoinGroupRequest, JoinGroupResponse>();
  f.template operator()<LeaveGroupRequest, LeaveGroupResponse>();
  f.template operator()<ListGroupsRequest, ListGroupsResponse>();
  f.template operator()<ListOffsetsRequest, ListOffsetsResponse>();
  f.template operator()<ListTransactionsRequest, ListTransactionsResponse>();
  f.template operator()<MetadataRequest, MetadataResponse>();
  f.template operator()<OffsetCommitRequest, OffsetCommitResponse>();
  f.template operator()<OffsetDeleteRequest, OffsetDeleteResponse>();
  f.template operator()<OffsetFetchRequest, OffsetFetchResponse>();
  f.template
  operator()<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse>();
  f.template operator()<ProduceRequest, ProduceResponse>();
  f.template operator()<SaslAuthenticateRequest, SaslAuthenticateResponse>();
  f.template operator()<SaslHandshakeRequest, SaslHandshakeResponse>();
  f.template operator()<SyncGroupRequest, SyncGroupResponse>();
  f.template operator()<TxnOffsetCommitRequest, TxnOffsetCommitResponse>();
  f.template operator()<WriteTxnMarkersRequest, WriteTxnMarkersResponse>();
}

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_ALL_H_
