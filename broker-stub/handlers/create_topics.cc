// CreateTopics: Kafka's checks (name, partitions, replication factor on a
// one-broker cluster, assignments, configs, names that collide with an
// existing one's metric name), validate_only, and an answer once the topics are
// durable. v5+ (which returns the configs) is not served: librdkafka 2.0.2
// sends at most v4 and kafka-python 2.0.2 at most v3.
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "handlers/authorize.h"
#include "handlers/handlers.h"

namespace exactly::broker {

namespace {

using protocol::CreateTopicsRequest;
using protocol::CreateTopicsResponse;
using protocol::ErrorCode;

// Whether two names would map to the same metric name ('.' and '_' are
// interchangeable there), which Kafka refuses.
bool Collides(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] == '.' ? '_' : a[i];
    char y = b[i] == '.' ? '_' : b[i];
    if (x != y) return false;
  }
  return true;
}

// Kafka's checks before the topic is created, in Kafka's order (ZkAdminManager
// then AdminZkClient.validateTopicCreate); BrokerState::CreateTopic then checks
// the name, the partition count and the configs.
ApiError Check(BrokerState& b, const CreateTopicsRequest::Topic& t,
               int32_t* partitions) {
  *partitions = t.num_partitions;
  if (b.topics().Find(t.name) != nullptr) {
    return Error(ErrorCode::kTopicAlreadyExists,
                 absl::StrCat("Topic '", t.name, "' already exists."));
  }
  std::vector<std::string> null_configs;
  for (const auto& c : t.configs) {
    if (!c.value) null_configs.push_back(c.name);
  }
  if (!null_configs.empty()) {
    return Error(ErrorCode::kInvalidConfig,
                 absl::StrCat("Null value not supported for topic configs: ",
                              absl::StrJoin(null_configs, ",")));
  }
  if (!t.assignments.empty()) {
    if (t.num_partitions != -1 || t.replication_factor != -1) {
      return Error(ErrorCode::kInvalidRequest,
                   "Both numPartitions or replicationFactor and "
                   "replicasAssignments were set. Both cannot be used at the "
                   "same time.");
    }
    for (size_t i = 0; i < t.assignments.size(); ++i) {
      const auto& a = t.assignments[i];
      if (a.partition_index != static_cast<int32_t>(i)) {
        return Error(ErrorCode::kInvalidReplicaAssignment,
                     "assignments must cover partitions 0..n-1 in order");
      }
      // In a cluster the controller checks the brokers named.
      if (b.controller() != nullptr) continue;
      if (a.broker_ids.size() != 1 || a.broker_ids[0] != b.options().node_id) {
        return Error(ErrorCode::kInvalidReplicaAssignment,
                     absl::StrCat("this cluster has one broker, id ",
                                  b.options().node_id));
      }
    }
    *partitions = static_cast<int32_t>(t.assignments.size());
  } else {
    int32_t resolved = t.num_partitions == -1 ? b.options().default_partitions
                                              : t.num_partitions;
    if (resolved <= 0) {
      return Error(ErrorCode::kInvalidPartitions,
                   "Number of partitions must be larger than 0.");
    }
    if (t.replication_factor == 0 || t.replication_factor < -1) {
      return Error(ErrorCode::kInvalidReplicationFactor,
                   "Replication factor must be larger than 0.");
    }
    if (t.replication_factor > 1 && b.controller() == nullptr) {
      return Error(ErrorCode::kInvalidReplicationFactor,
                   absl::StrCat("Replication factor: ", t.replication_factor,
                                " larger than available brokers: 1."));
    }
  }
  if (ValidateTopicName(t.name).ok() &&
      t.name.find_first_of("._") != std::string::npos) {
    std::vector<std::string> colliding;
    for (const auto& [name, topic] : b.topics().all()) {
      if (Collides(name, t.name)) colliding.push_back(name);
    }
    if (!colliding.empty()) {
      return Error(
          ErrorCode::kInvalidTopicException,
          absl::StrCat("Topic '", t.name, "' collides with existing topics: ",
                       absl::StrJoin(colliding, ", ")));
    }
  }
  return {};
}

}  // namespace

void HandleCreateTopics(BrokerState& b, const RequestHeader& h,
                        CreateTopicsRequest& request, Responder r) {
  CreateTopicsResponse response;
  std::multiset<std::string> names;
  for (const auto& t : request.topics) names.insert(t.name);
  std::set<std::string> answered;
  // Kafka's checks: CREATE on the cluster, or on each topic.
  const bool may_create_any = AllowedOnCluster(b, r, AclOperation::kCreate);
  for (const auto& t : request.topics) {
    // A name listed twice is answered once, INVALID_REQUEST, and not created
    // (Kafka: after the other topics).
    if (names.count(t.name) > 1) continue;
    CreateTopicsResponse::Topic& rt = response.topics.emplace_back();
    rt.name = t.name;
    ApiError error;
    int32_t partitions = -1;
    if (auto injected = b.faults().TakeError(h.api_key, &t.name)) {
      error = Error(static_cast<ErrorCode>(*injected), "injected fault");
    } else if (!may_create_any && !Allowed(b, r, AclOperation::kCreate,
                                           AclResourceType::kTopic, t.name)) {
      error =
          Error(ErrorCode::kTopicAuthorizationFailed, "Authorization failed.");
    } else {
      error = Check(b, t, &partitions);
    }
    if (error.ok()) {
      std::map<std::string, std::string> configs;
      for (const auto& c : t.configs) configs[c.name] = *c.value;
      std::optional<std::vector<std::vector<int32_t>>> assignments;
      if (!t.assignments.empty()) {
        assignments.emplace();
        for (const auto& a : t.assignments)
          assignments->push_back(a.broker_ids);
      }
      error = b.CreateTopic(t.name, partitions, configs, request.validate_only,
                            t.replication_factor, assignments);
    }
    rt.error_code = error.code_value();
    rt.error_message = error.message_or_null();
  }
  for (const auto& t : request.topics) {
    if (names.count(t.name) < 2 || !answered.insert(t.name).second) continue;
    CreateTopicsResponse::Topic& rt = response.topics.emplace_back();
    rt.name = t.name;
    rt.error_code = static_cast<int16_t>(ErrorCode::kInvalidRequest);
    rt.error_message = "Duplicate topic name.";
  }
  b.commits().AfterCommit(
      [response = std::move(response),
       r = std::move(r)](const absl::Status&) mutable { r.Send(response); });
}

}  // namespace exactly::broker
