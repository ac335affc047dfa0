// DeleteTopics: each named topic goes with its records, producer states and
// committed offsets (cluster/topic_admin.h); unknown names get
// UNKNOWN_TOPIC_OR_PARTITION. Answered once the deletion is durable, so a topic
// of the same name can be created right after. v6 (topics by id) is not
// served: this broker has no topic ids.
#include <map>
#include <set>

#include "cluster/topic_admin.h"
#include "handlers/admin_handlers.h"

namespace exactly::broker {

void HandleDeleteTopics(BrokerState& b, const RequestHeader& h,
                        protocol::DeleteTopicsRequest& request, Responder r) {
  protocol::DeleteTopicsResponse response;
  // A name listed twice is answered once, INVALID_REQUEST, and not deleted
  // (as Kafka's controller answers).
  std::map<std::string, int> listed;
  for (const std::string& name : request.topic_names) ++listed[name];
  std::set<std::string> answered;
  for (const std::string& name : request.topic_names) {
    if (!answered.insert(name).second) continue;
    ApiError error;
    if (listed[name] > 1) {
      error =
          Error(protocol::ErrorCode::kInvalidRequest, "Duplicate topic name.");
    } else if (auto injected = b.faults().TakeError(h.api_key, &name)) {
      error =
          Error(static_cast<protocol::ErrorCode>(*injected), "injected fault");
    } else if (!Allowed(b, r, AclOperation::kDelete, AclResourceType::kTopic,
                        name) &&
               (b.topics().Find(name) != nullptr ||
                !Allowed(b, r, AclOperation::kDescribe, AclResourceType::kTopic,
                         name))) {
      // Kafka's checks: DELETE on the topic; an unknown one is said to be
      // unknown only to those who may DESCRIBE it.
      error = Error(protocol::ErrorCode::kTopicAuthorizationFailed,
                    "Authorization failed.");
    } else {
      error = DeleteTopic(b, name);
    }
    protocol::DeleteTopicsResponse::Topic& rt = response.topics.emplace_back();
    rt.name = name;
    rt.error_code = error.code_value();
    rt.error_message = error.message_or_null();
  }
  b.commits().AfterCommit(
      [response = std::move(response),
       r = std::move(r)](const absl::Status&) mutable { r.Send(response); });
}

}  // namespace exactly::broker
