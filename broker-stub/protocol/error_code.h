// Kafka protocol error codes (the int16 every response carries), as Apache
// Kafka numbers them.
#ifndef EXACTLY_BROKER_PROTOCOL_ERROR_CODE_H_
#define EXACTLY_BROKER_PROTOCOL_ERROR_CODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace exactly::protocol {

enum class ErrorCode : int16_t {
  kUnknownServerError = -1,
  kNone = 0,
  kOffsetOutOfRange = 1,
  kCorruptMessage = 2,
  kUnknownTopicOrPartition = 3,
  kInvalidFetchSize = 4,
  kLeaderNotAvailable = 5,
  kNotLeaderOrFollower = 6,
  kRequestTimedOut = 7,
  kBrokerNotAvailable = 8,
  kReplicaNotAvailable = 9,
  kMessageTooLarge = 10,
  kStaleControllerEpoch = 11,
  kOffsetMetadataTooLarge = 12,
  kNetworkException = 13,
  kCoordinatorLoadInProgress = 14,
  kCoordinatorNotAvailable = 15,
  kNotCoordinator = 16,
  kInvalidTopicException = 17,
  kRecordListTooLarge = 18,
  kNotEnoughReplicas = 19,
  kNotEnoughReplicasAfterAppend = 20,
  kInvalidRequiredAcks = 21,
  kIllegalGeneration = 22,
  kInconsistentGroupProtocol = 23,
  kInvalidGroupId = 24,
  kUnknownMemberId = 25,
  kInvalidSessionTimeout = 26,
  kRebalanceInProgress = 27,
  kInvalidCommitOffsetSize = 28,
  kTopicAuthorizationFailed = 29,
  kGroupAuthorizationFailed = 30,
  kClusterAuthorizationFailed = 31,
  kInvalidTimestamp = 32,
  kUnsupportedSaslMechanism = 33,
  kIllegalSaslState = 34,
  kUnsupportedVersion = 35,
  kTopicAlreadyExists = 36,
  kInvalidPartitions = 37,
  kInvalidReplicationFactor = 38,
  kInvalidReplicaAssignment = 39,
  kInvalidConfig = 40,
  kNotController = 41,
  kInvalidRequest = 42,
  kUnsupportedForMessageFormat = 43,
  kPolicyViolation = 44,
  kOutOfOrderSequenceNumber = 45,
  kDuplicateSequenceNumber = 46,
  kInvalidProducerEpoch = 47,
  kInvalidTxnState = 48,
  kInvalidProducerIdMapping = 49,
  kInvalidTransactionTimeout = 50,
  kConcurrentTransactions = 51,
  kTransactionCoordinatorFenced = 52,
  kTransactionalIdAuthorizationFailed = 53,
  kSecurityDisabled = 54,
  kOperationNotAttempted = 55,
  kKafkaStorageError = 56,
  kLogDirNotFound = 57,
  kSaslAuthenticationFailed = 58,
  kUnknownProducerId = 59,
  kReassignmentInProgress = 60,
  kNonEmptyGroup = 68,
  kGroupIdNotFound = 69,
  kFetchSessionIdNotFound = 70,
  kInvalidFetchSessionEpoch = 71,
  kTopicDeletionDisabled = 73,
  kFencedLeaderEpoch = 74,
  kUnknownLeaderEpoch = 75,
  kUnsupportedCompressionType = 76,
  kOffsetNotAvailable = 78,
  kMemberIdRequired = 79,
  kGroupMaxSizeReached = 81,
  kFencedInstanceId = 82,
  kGroupSubscribedToTopic = 86,
  kInvalidRecord = 87,
  kUnstableOffsetCommit = 88,
  kThrottlingQuotaExceeded = 89,
  kProducerFenced = 90,
  kResourceNotFound = 91,
  kDuplicateResource = 92,
  kUnacceptableCredential = 93,
  kInvalidUpdateVersion = 95,
  kUnknownTopicId = 100,
  kTransactionalIdNotFound = 105,
  kIneligibleReplica = 107,
};

// "NONE", "OUT_OF_ORDER_SEQUENCE_NUMBER", ... as Kafka spells them.
std::string_view ErrorCodeName(ErrorCode code);
inline std::string_view ErrorCodeName(int16_t code) {
  return ErrorCodeName(static_cast<ErrorCode>(code));
}
// The code named `name` (as ErrorCodeName spells it), if there is one.
std::optional<ErrorCode> ErrorCodeFromName(std::string_view name);

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_ERROR_CODE_H_
