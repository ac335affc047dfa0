#include "protocol/error_code.h"

namespace exactly::protocol {

namespace {

struct ErrorCodeInfo {
  ErrorCode code;
  std::string_view name;
};

constexpr ErrorCodeInfo kErrorCodes[] = {
    {ErrorCode::kUnknownServerError, "UNKNOWN_SERVER_ERROR"},
    {ErrorCode::kNone, "NONE"},
    {ErrorCode::kOffsetOutOfRange, "OFFSET_OUT_OF_RANGE"},
    {ErrorCode::kCorruptMessage, "CORRUPT_MESSAGE"},
    {ErrorCode::kUnknownTopicOrPartition, "UNKNOWN_TOPIC_OR_PARTITION"},
    {ErrorCode::kInvalidFetchSize, "INVALID_FETCH_SIZE"},
    {ErrorCode::kLeaderNotAvailable, "LEADER_NOT_AVAILABLE"},
    {ErrorCode::kNotLeaderOrFollower, "NOT_LEADER_OR_FOLLOWER"},
    {ErrorCode::kRequestTimedOut, "REQUEST_TIMED_OUT"},
    {ErrorCode::kBrokerNotAvailable, "BROKER_NOT_AVAILABLE"},
    {ErrorCode::kReplicaNotAvailable, "REPLICA_NOT_AVAILABLE"},
    {ErrorCode::kMessageTooLarge, "MESSAGE_TOO_LARGE"},
    {ErrorCode::kStaleControllerEpoch, "STALE_CONTROLLER_EPOCH"},
    {ErrorCode::kOffsetMetadataTooLarge, "OFFSET_METADATA_TOO_LARGE"},
    {ErrorCode::kNetworkException, "NETWORK_EXCEPTION"},
    {ErrorCode::kCoordinatorLoadInProgress, "COORDINATOR_LOAD_IN_PROGRESS"},
    {ErrorCode::kCoordinatorNotAvailable, "COORDINATOR_NOT_AVAILABLE"},
    {ErrorCode::kNotCoordinator, "NOT_COORDINATOR"},
    {ErrorCode::kInvalidTopicException, "INVALID_TOPIC_EXCEPTION"},
    {ErrorCode::kRecordListTooLarge, "RECORD_LIST_TOO_LARGE"},
    {ErrorCode::kNotEnoughReplicas, "NOT_ENOUGH_REPLICAS"},
    {ErrorCode::kNotEnoughReplicasAfterAppend,
     "NOT_ENOUGH_REPLICAS_AFTER_APPEND"},
    {ErrorCode::kInvalidRequiredAcks, "INVALID_REQUIRED_ACKS"},
    {ErrorCode::kIllegalGeneration, "ILLEGAL_GENERATION"},
    {ErrorCode::kInconsistentGroupProtocol, "INCONSISTENT_GROUP_PROTOCOL"},
    {ErrorCode::kInvalidGroupId, "INVALID_GROUP_ID"},
    {ErrorCode::kUnknownMemberId, "UNKNOWN_MEMBER_ID"},
    {ErrorCode::kInvalidSessionTimeout, "INVALID_SESSION_TIMEOUT"},
    {ErrorCode::kRebalanceInProgress, "REBALANCE_IN_PROGRESS"},
    {ErrorCode::kInvalidCommitOffsetSize, "INVALID_COMMIT_OFFSET_SIZE"},
    {ErrorCode::kTopicAuthorizationFailed, "TOPIC_AUTHORIZATION_FAILED"},
    {ErrorCode::kGroupAuthorizationFailed, "GROUP_AUTHORIZATION_FAILED"},
    {ErrorCode::kClusterAuthorizationFailed, "CLUSTER_AUTHORIZATION_FAILED"},
    {ErrorCode::kInvalidTimestamp, "INVALID_TIMESTAMP"},
    {ErrorCode::kUnsupportedSaslMechanism, "UNSUPPORTED_SASL_MECHANISM"},
    {ErrorCode::kIllegalSaslState, "ILLEGAL_SASL_STATE"},
    {ErrorCode::kUnsupportedVersion, "UNSUPPORTED_VERSION"},
    {ErrorCode::kTopicAlreadyExists, "TOPIC_ALREADY_EXISTS"},
    {ErrorCode::kInvalidPartitions, "INVALID_PARTITIONS"},
    {ErrorCode::kInvalidReplicationFactor, "INVALID_REPLICATION_FACTOR"},
    {ErrorCode::kInvalidReplicaAssignment, "INVALID_REPLICA_ASSIGNMENT"},
    {ErrorCode::kInvalidConfig, "INVALID_CONFIG"},
    {ErrorCode::kNotController, "NOT_CONTROLLER"},
    {ErrorCode::kInvalidRequest, "INVALID_REQUEST"},
    {ErrorCode::kUnsupportedForMessageFormat, "UNSUPPORTED_FOR_MESSAGE_FORMAT"},
    {ErrorCode::kPolicyViolation, "POLICY_VIOLATION"},
    {ErrorCode::kOutOfOrderSequenceNumber, "OUT_OF_ORDER_SEQUENCE_NUMBER"},
    {ErrorCode::kDuplicateSequenceNumber, "DUPLICATE_SEQUENCE_NUMBER"},
    {ErrorCode::kInvalidProducerEpoch, "INVALID_PRODUCER_EPOCH"},
    {ErrorCode::kInvalidTxnState, "INVALID_TXN_STATE"},
    {ErrorCode::kInvalidProducerIdMapping, "INVALID_PRODUCER_ID_MAPPING"},
    {ErrorCode::kInvalidTransactionTimeout, "INVALID_TRANSACTION_TIMEOUT"},
    {ErrorCode::kConcurrentTransactions, "CONCURRENT_TRANSACTIONS"},
    {ErrorCode::kTransactionCoordinatorFenced,
     "TRANSACTION_COORDINATOR_FENCED"},
    {ErrorCode::kTransactionalIdAuthorizationFailed,
     "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"},
    {ErrorCode::kSecurityDisabled, "SECURITY_DISABLED"},
    {ErrorCode::kOperationNotAttempted, "OPERATION_NOT_ATTEMPTED"},
    {ErrorCode::kKafkaStorageError, "KAFKA_STORAGE_ERROR"},
    {ErrorCode::kLogDirNotFound, "LOG_DIR_NOT_FOUND"},
    {ErrorCode::kSaslAuthenticationFailed, "SASL_AUTHENTICATION_FAILED"},
    {ErrorCode::kUnknownProducerId, "UNKNOWN_PRODUCER_ID"},
    {ErrorCode::kReassignmentInProgress, "REASSIGNMENT_IN_PROGRESS"},
    {ErrorCode::kNonEmptyGroup, "NON_EMPTY_GROUP"},
    {ErrorCode::kGroupIdNotFound, "GROUP_ID_NOT_FOUND"},
    {ErrorCode::kFetchSessionIdNotFound, "FETCH_SESSION_ID_NOT_FOUND"},
    {ErrorCode::kInvalidFetchSessionEpoch, "INVALID_FETCH_SESSION_EPOCH"},
    {ErrorCode::kTopicDeletionDisabled, "TOPIC_DELETION_DISABLED"},
    {ErrorCode::kFencedLeaderEpoch, "FENCED_LEADER_EPOCH"},
    {ErrorCode::kUnknownLeaderEpoch, "UNKNOWN_LEADER_EPOCH"},
    {ErrorCode::kUnsupportedCompressionType, "UNSUPPORTED_COMPRESSION_TYPE"},
    {ErrorCode::kOffsetNotAvailable, "OFFSET_NOT_AVAILABLE"},
    {ErrorCode::kMemberIdRequired, "MEMBER_ID_REQUIRED"},
    {ErrorCode::kGroupMaxSizeReached, "GROUP_MAX_SIZE_REACHED"},
    {ErrorCode::kFencedInstanceId, "FENCED_INSTANCE_ID"},
    {ErrorCode::kGroupSubscribedToTopic, "GROUP_SUBSCRIBED_TO_TOPIC"},
    {ErrorCode::kInvalidRecord, "INVALID_RECORD"},
    {ErrorCode::kUnstableOffsetCommit, "UNSTABLE_OFFSET_COMMIT"},
    {ErrorCode::kThrottlingQuotaExceeded, "THROTTLING_QUOTA_EXCEEDED"},
    {ErrorCode::kProducerFenced, "PRODUCER_FENCED"},
    {ErrorCode::kResourceNotFound, "RESOURCE_NOT_FOUND"},
    {ErrorCode::kDuplicateResource, "DUPLICATE_RESOURCE"},
    {ErrorCode::kUnacceptableCredential, "UNACCEPTABLE_CREDENTIAL"},
    {ErrorCode::kInvalidUpdateVersion, "INVALID_UPDATE_VERSION"},
    {ErrorCode::kUnknownTopicId, "UNKNOWN_TOPIC_ID"},
    {ErrorCode::kTransactionalIdNotFound, "TRANSACTIONAL_ID_NOT_FOUND"},
    {ErrorCode::kIneligibleReplica, "INELIGIBLE_REPLICA"},
};

}  // namespace

std::string_view ErrorCodeName(ErrorCode code) {
  for (const ErrorCodeInfo& info : kErrorCodes) {
    if (info.code == code) return info.name;
  }
  return "UNKNOWN_ERROR_CODE";
}

std::optional<ErrorCode> ErrorCodeFromName(std::string_view name) {
  for (const ErrorCodeInfo& info : kErrorCodes) {
    if (info.name == name) return info.code;
  }
  return std::nullopt;
}

}  // namespace exactly::protocol
