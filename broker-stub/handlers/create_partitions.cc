// CreatePartitions: grows topics to a new partition count, with Kafka's checks
// (the count must grow, assignments must name this broker once per new
// partition, a topic at most once per request: answered once, INVALID_REQUEST)
// and validate_only. Answered
// once the new partition count is durable.
#include <set>

#include "absl/strings/str_cat.h"
#include "cluster/topic_admin.h"
#include "handlers/admin_handlers.h"

namespace exactly::broker {

void HandleCreatePartitions(BrokerState& b, const RequestHeader& h,
                            protocol::CreatePartitionsRequest& request,
                            Responder r) {
  protocol::CreatePartitionsResponse response;
  std::multiset<std::string> names;
  for (const auto& t : request.topics) names.insert(t.name);
  std::set<std::string> answered;
  for (const auto& t : request.topics) {
    // A name listed twice is answered once (Kafka: INVALID_REQUEST, and the
    // topic keeps its partitions).
    if (!answered.insert(t.name).second) continue;
    ApiError error;
    if (names.count(t.name) > 1) {
      error = Error(protocol::ErrorCode::kInvalidRequest,
                    "Duplicate topic in request.");
    } else if (auto injected = b.faults().TakeError(h.api_key, &t.name)) {
      error =
          Error(static_cast<protocol::ErrorCode>(*injected), "injected fault");
    } else if (!Allowed(b, r, AclOperation::kAlter, AclResourceType::kTopic,
                        t.name)) {
      error = Error(protocol::ErrorCode::kTopicAuthorizationFailed,
                    "Authorization failed.");
    } else {
      std::optional<std::vector<std::vector<int32_t>>> assignments;
      if (t.assignments) {
        assignments.emplace();
        for (const auto& a : *t.assignments)
          assignments->push_back(a.broker_ids);
      }
      error =
          AddPartitions(b, t.name, t.count, assignments, request.validate_only);
    }
    protocol::CreatePartitionsResponse::Result& result =
        response.results.emplace_back();
    result.name = t.name;
    result.error_code = error.code_value();
    result.error_message = error.message_or_null();
  }
  b.commits().AfterCommit(
      [response = std::move(response),
       r = std::move(r)](const absl::Status&) mutable { r.Send(response); });
}

}  // namespace exactly::broker
