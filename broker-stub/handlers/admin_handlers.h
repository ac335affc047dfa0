// The admin API handlers (one file each: delete_topics.cc,
// create_partitions.cc, delete_records.cc, describe_configs.cc,
// alter_configs.cc, incremental_alter_configs.cc), listed in admin_apis.cc.
// CreateTopics is a core API (handlers.h). Each checks what Kafka's broker
// checks, changes the cluster through cluster/topic_admin.h and answers once
// the change is durable.
#ifndef EXACTLY_BROKER_HANDLERS_ADMIN_HANDLERS_H_
#define EXACTLY_BROKER_HANDLERS_ADMIN_HANDLERS_H_

#include <cstdint>
#include <string>

#include "cluster/api_error.h"
#include "cluster/broker_state.h"
#include "handlers/authorize.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"
#include "server/responder.h"

namespace exactly::broker {

using protocol::RequestHeader;

// Config resource types (Kafka's ConfigResource.Type ids).
inline constexpr int8_t kResourceTopic = 2;
inline constexpr int8_t kResourceBroker = 4;
inline constexpr int8_t kResourceBrokerLogger = 8;

// Config sources (Kafka's DescribeConfigsResponse.ConfigSource ids).
inline constexpr int8_t kSourceTopicConfig = 1;  // DYNAMIC_TOPIC_CONFIG
inline constexpr int8_t kSourceDynamicBrokerConfig = 2;
inline constexpr int8_t kSourceDynamicDefaultBrokerConfig = 3;
inline constexpr int8_t kSourceStaticBrokerConfig = 4;
inline constexpr int8_t kSourceDefaultConfig = 5;

// Kafka's checks of a BROKER or BROKER_LOGGER resource name: this broker's id,
// or (BROKER only) "" for the cluster-wide defaults. INVALID_REQUEST otherwise.
ApiError CheckBrokerResourceName(const BrokerState& b, const std::string& name,
                                 bool allow_empty);

// Kafka's checks on a config resource: `operation` (DESCRIBE_CONFIGS,
// ALTER_CONFIGS) on the topic (TOPIC_AUTHORIZATION_FAILED) or, for a broker
// or its loggers, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
inline ApiError ConfigsAuthorization(const BrokerState& b, const Responder& r,
                                     AclOperation operation,
                                     int8_t resource_type,
                                     const std::string& name) {
  if (b.authorizer() == nullptr) [[likely]]
    return {};
  if (resource_type == kResourceTopic) {
    if (!Allowed(b, r, operation, AclResourceType::kTopic, name))
      return Error(protocol::ErrorCode::kTopicAuthorizationFailed,
                   "Topic authorization failed.");
  } else if (resource_type == kResourceBroker ||
             resource_type == kResourceBrokerLogger) {
    if (!AllowedOnCluster(b, r, operation))
      return Error(protocol::ErrorCode::kClusterAuthorizationFailed,
                   "Cluster authorization failed.");
  }
  return {};
}

void HandleDeleteTopics(BrokerState& b, const RequestHeader& h,
                        protocol::DeleteTopicsRequest& request, Responder r);
void HandleCreatePartitions(BrokerState& b, const RequestHeader& h,
                            protocol::CreatePartitionsRequest& request,
                            Responder r);
void HandleDeleteRecords(BrokerState& b, const RequestHeader& h,
                         protocol::DeleteRecordsRequest& request, Responder r);
void HandleDescribeConfigs(BrokerState& b, const RequestHeader& h,
                           protocol::DescribeConfigsRequest& request,
                           Responder r);
void HandleAlterConfigs(BrokerState& b, const RequestHeader& h,
                        protocol::AlterConfigsRequest& request, Responder r);
void HandleIncrementalAlterConfigs(
    BrokerState& b, const RequestHeader& h,
    protocol::IncrementalAlterConfigsRequest& request, Responder r);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_ADMIN_HANDLERS_H_
