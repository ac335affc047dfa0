// AlterConfigs (the legacy, whole-set form): each TOPIC resource's configs
// become exactly the ones listed (every other config returns to its default),
// validated first, with validate_only; retention changes take effect at once. A
// BROKER resource (this broker's id, or "" for the cluster-wide default) gets
// the listed dynamic broker configs as its whole dynamic set
// (cluster/dynamic_broker_config.h). Answered once the new configs are
// durable.
#include "absl/strings/str_cat.h"
#include "cluster/dynamic_broker_config.h"
#include "cluster/topic_admin.h"
#include "handlers/admin_handlers.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

}  // namespace

void HandleAlterConfigs(BrokerState& b, const RequestHeader& h,
                        protocol::AlterConfigsRequest& request, Responder r) {
  protocol::AlterConfigsResponse response;
  for (const auto& resource : request.resources) {
    ApiError error;
    if (auto injected =
            b.faults().TakeError(h.api_key, &resource.resource_name)) {
      error = Error(static_cast<ErrorCode>(*injected), "injected fault");
    } else if (ApiError denied = ConfigsAuthorization(
                   b, r, AclOperation::kAlterConfigs, resource.resource_type,
                   resource.resource_name);
               !denied.ok()) {
      error = std::move(denied);
    } else if (resource.resource_type == kResourceTopic) {
      std::vector<ConfigChange> changes;
      for (const auto& c : resource.configs) {
        changes.push_back({c.name, ConfigChange::Op::kSet, c.value});
      }
      error = AlterTopicConfigs(b, resource.resource_name, changes,
                                /*replace_all=*/true, request.validate_only);
    } else if (resource.resource_type == kResourceBroker) {
      error = CheckBrokerResourceName(b, resource.resource_name,
                                      /*allow_empty=*/true);
      if (error.ok()) {
        std::vector<ConfigChange> changes;
        for (const auto& c : resource.configs) {
          changes.push_back({c.name, ConfigChange::Op::kSet, c.value});
        }
        error = AlterBrokerConfigs(b, resource.resource_name, changes,
                                   /*replace_all=*/true, request.validate_only);
      }
    } else {
      error = Error(ErrorCode::kInvalidRequest,
                    absl::StrCat("Unsupported resource type: ",
                                 static_cast<int>(resource.resource_type)));
    }
    protocol::AlterConfigsResponse::Result& result =
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
