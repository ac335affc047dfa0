// IncrementalAlterConfigs (KIP-339): SET, DELETE, APPEND and SUBTRACT (the
// last two for LIST configs only) applied to a TOPIC resource's current
// configs, all validated before any applies, with validate_only; retention
// changes take effect at once. A resource listed twice, a key listed twice in
// one resource, a null value for anything but DELETE or an unknown operation
// get INVALID_REQUEST, as from Kafka. A BROKER resource (this broker's id, or
// "" for the cluster-wide default) takes the same operations on its dynamic
// broker configs (cluster/dynamic_broker_config.h). BROKER_LOGGER (this
// broker's id) accepts an empty change only: no logger can be set. Answered
// once the new configs are durable.
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cluster/dynamic_broker_config.h"
#include "cluster/topic_admin.h"
#include "handlers/admin_handlers.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::IncrementalAlterConfigsRequest;

std::vector<ConfigChange> Changes(
    const IncrementalAlterConfigsRequest::Resource& resource) {
  std::vector<ConfigChange> changes;
  for (const auto& c : resource.configs) {
    changes.push_back(
        {c.name, static_cast<ConfigChange::Op>(c.config_operation), c.value});
  }
  return changes;
}

ApiError AlterLogger(const BrokerState& b,
                     const IncrementalAlterConfigsRequest::Resource& resource) {
  ApiError error = CheckBrokerResourceName(b, resource.resource_name,
                                           /*allow_empty=*/false);
  if (!error.ok() || resource.configs.empty()) return error;
  std::vector<std::string> names;
  for (const auto& c : resource.configs) names.push_back(c.name);
  return Error(ErrorCode::kInvalidConfig,
               absl::StrCat("No such logger on this broker: ",
                            absl::StrJoin(names, ", ")));
}

}  // namespace

void HandleIncrementalAlterConfigs(BrokerState& b, const RequestHeader& h,
                                   IncrementalAlterConfigsRequest& request,
                                   Responder r) {
  protocol::IncrementalAlterConfigsResponse response;
  std::multiset<std::pair<int8_t, std::string>> resources;
  for (const auto& resource : request.resources) {
    resources.emplace(resource.resource_type, resource.resource_name);
  }
  for (const auto& resource : request.resources) {
    ApiError error;
    if (resources.count({resource.resource_type, resource.resource_name}) > 1) {
      error = Error(ErrorCode::kInvalidRequest,
                    "Each resource must appear at most once.");
    } else if (auto injected =
                   b.faults().TakeError(h.api_key, &resource.resource_name)) {
      error = Error(static_cast<ErrorCode>(*injected), "injected fault");
    } else if (ApiError denied = ConfigsAuthorization(
                   b, r, AclOperation::kAlterConfigs, resource.resource_type,
                   resource.resource_name);
               !denied.ok()) {
      error = std::move(denied);
    } else if (resource.resource_type == kResourceTopic) {
      error = AlterTopicConfigs(b, resource.resource_name, Changes(resource),
                                /*replace_all=*/false, request.validate_only);
    } else if (resource.resource_type == kResourceBroker) {
      error = CheckBrokerResourceName(b, resource.resource_name,
                                      /*allow_empty=*/true);
      if (error.ok()) {
        error =
            AlterBrokerConfigs(b, resource.resource_name, Changes(resource),
                               /*replace_all=*/false, request.validate_only);
      }
    } else if (resource.resource_type == kResourceBrokerLogger) {
      error = AlterLogger(b, resource);
    } else {
      error = Error(ErrorCode::kInvalidRequest,
                    absl::StrCat("Unsupported resource type: ",
                                 static_cast<int>(resource.resource_type)));
    }
    protocol::IncrementalAlterConfigsResponse::Result& result =
        response.results.emplace_back();
    result.resource_type = resource.resource_type;
    result.resource_name = resource.resource_name;
    result.error_code = error.code_value();
    result.error_message = error.message_or_null();
  }
  b.commits().AfterCommit(
      [response = std::move(response),
       r = std::move(r)](const absl::Status&) mutable { r.Send(response); });
}

}  // namespace exactly::broker
