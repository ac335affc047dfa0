// CreateTopics: Kafka's checks (name, partitions, replication factor on a
// one-broker cluster, assignments, configs), validate_only, and an answer once
// the topics are durable.
#include <set>

#include "absl/strings/str_cat.h"
#include "handlers/handlers.h"

namespace exactly::broker {

namespace {

using protocol::CreateTopicsRequest;
using protocol::CreateTopicsResponse;
using protocol::ErrorCode;

ApiError Check(const BrokerState& b, const CreateTopicsRequest::Topic& t,
               int32_t* partitions) {
  *partitions = t.num_partitions;
  if (!t.assignments.empty()) {
    if (t.num_partitions != -1 || t.replication_factor != -1) {
      return Error(ErrorCode::kInvalidRequest,
                   "both partitions/replication factor and replica assignments "
                   "were given");
    }
    for (size_t i = 0; i < t.assignments.size(); ++i) {
      const auto& a = t.assignments[i];
      if (a.partition_index != static_cast<int32_t>(i)) {
        return Error(ErrorCode::kInvalidReplicaAssignment,
                     "assignments must cover partitions 0..n-1 in order");
      }
      if (a.broker_ids.size() != 1 || a.broker_ids[0] != b.options().node_id) {
        return Error(ErrorCode::kInvalidReplicaAssignment,
                     absl::StrCat("this cluster has one broker, id ",
                                  b.options().node_id));
      }
    }
    *partitions = static_cast<int32_t>(t.assignments.size());
    return {};
  }
  if (t.replication_factor == 0 || t.replication_factor < -1) {
    return Error(ErrorCode::kInvalidReplicationFactor,
                 absl::StrCat("replication factor must be positive, not ",
                              t.replication_factor));
  }
  if (t.replication_factor > 1) {
    return Error(ErrorCode::kInvalidReplicationFactor,
                 absl::StrCat("Replication factor: ", t.replication_factor,
                              " larger than available brokers: 1."));
  }
  return {};
}

}  // namespace

void HandleCreateTopics(BrokerState& b, const RequestHeader& h,
                        CreateTopicsRequest& request, Responder r) {
  CreateTopicsResponse response;
  std::multiset<std::string> names;
  for (const auto& t : request.topics) names.insert(t.name);
  for (const auto& t : request.topics) {
    CreateTopicsResponse::Topic& rt = response.topics.emplace_back();
    rt.name = t.name;
    ApiError error;
    int32_t partitions = -1;
    if (names.count(t.name) > 1) {
      error = Error(ErrorCode::kInvalidRequest,
                    absl::StrCat("topic '", t.name,
                                 "' appears more than once in the request"));
    } else if (auto injected = b.faults().TakeError(h.api_key, &t.name)) {
      error = Error(static_cast<ErrorCode>(*injected), "injected fault");
    } else {
      error = Check(b, t, &partitions);
    }
    if (error.ok()) {
      std::map<std::string, std::string> configs;
      for (const auto& c : t.configs) {
        if (c.value) configs[c.name] = *c.value;
      }
      error = b.CreateTopic(t.name, partitions, configs, request.validate_only);
    }
    rt.error_code = error.code_value();
    rt.error_message = error.message_or_null();
  }
  b.commits().AfterCommit(
      [response = std::move(response),
       r = std::move(r)](const absl::Status&) mutable { r.Send(response); });
}

}  // namespace exactly::broker
