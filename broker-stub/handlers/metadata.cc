// Metadata: the cluster's brokers (this one alone, or the controller's live
// ones), and the topics asked for (created on demand when auto-creation is on
// and the client allows it, answered from the next request on) with each
// partition's leader, replicas and ISR.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cluster/cluster_membership.h"
#include "cluster/coordinator_placement.h"
#include "controller/cluster_metadata.h"
#include "handlers/authorize.h"
#include "handlers/handlers.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::MetadataResponse;

MetadataResponse::Topic Describe(const BrokerState& b, const Topic& topic) {
  MetadataResponse::Topic t;
  t.name = topic.name;
  t.is_internal = IsInternalTopic(topic.name);
  const ClusterMetadata* cluster = b.cluster_metadata();
  if (const TopicPlacement* placement =
          cluster ? cluster->topic(topic.name) : nullptr) {
    for (size_t i = 0; i < placement->partitions.size(); ++i) {
      const PartitionState& p = placement->partitions[i];
      MetadataResponse::Partition& mp = t.partitions.emplace_back();
      mp.index = static_cast<int32_t>(i);
      mp.leader_id = p.leader;
      mp.leader_epoch = std::max(p.leader_epoch, 0);
      mp.replica_nodes = p.replicas;
      mp.isr_nodes = p.isr;
      for (int32_t r : p.replicas) {
        const BrokerInfo* info = cluster->broker(r);
        if (info == nullptr || info->fenced) mp.offline_replicas.push_back(r);
      }
      if (p.leader == kNoLeader)
        mp.error_code = static_cast<int16_t>(ErrorCode::kLeaderNotAvailable);
    }
    return t;
  }
  for (const auto& p : topic.partitions) {
    MetadataResponse::Partition& mp = t.partitions.emplace_back();
    mp.index = p->index();
    mp.leader_id = b.options().node_id;
    mp.leader_epoch = p->leader_epoch();
    mp.replica_nodes = {b.options().node_id};
    mp.isr_nodes = {b.options().node_id};
  }
  return t;
}

}  // namespace

void HandleMetadata(BrokerState& b, const RequestHeader& h,
                    protocol::MetadataRequest& request, Responder r) {
  MetadataResponse response;
  response.cluster_id = b.options().cluster_id;
  if (const ClusterMetadata* cluster = b.cluster_metadata()) {
    // Kafka lists the brokers that are alive (not fenced); the controller id
    // is one of them (here the lowest), as clients only need it to exist.
    for (const auto& [id, info] : cluster->brokers) {
      if (info.fenced) continue;
      response.brokers.push_back(
          {id, info.host, info.PortFor(r.listener()), std::nullopt, {}});
    }
    response.controller_id =
        response.brokers.empty() ? -1 : response.brokers.front().node_id;
  } else {
    response.brokers.push_back(
        {b.options().node_id,
         b.advertised_host(),
         static_cast<int32_t>(b.advertised_port(r.listener())),
         std::nullopt,
         {}});
    response.controller_id = b.options().node_id;
  }
  if (request.AllTopics(h.api_version)) {
    for (const auto& [name, topic] : b.topics().all()) {
      // Kafka lists only the topics the client may DESCRIBE.
      if (!Allowed(b, r, AclOperation::kDescribe, AclResourceType::kTopic,
                   name))
        continue;
      response.topics.push_back(Describe(b, *topic));
    }
  } else {
    // Before v4 there is no flag: Kafka auto-creates whenever the broker allows
    // it.
    bool allow_create = h.api_version < 4 || request.allow_auto_topic_creation;
    for (const auto& wanted : *request.topics) {
      if (absl::Status s = ValidateTopicName(wanted.name); !s.ok()) {
        MetadataResponse::Topic& t = response.topics.emplace_back();
        t.name = wanted.name;
        t.error_code = static_cast<int16_t>(ErrorCode::kInvalidTopicException);
        continue;
      }
      const bool existed = b.topics().Find(wanted.name) != nullptr;
      // Kafka's checks: DESCRIBE on a named topic, and to create one CREATE
      // on the cluster or on the topic.
      const bool denied =
          !Allowed(b, r, AclOperation::kDescribe, AclResourceType::kTopic,
                   wanted.name) ||
          (!existed && allow_create && b.options().auto_create_topics &&
           !AllowedOnCluster(b, r, AclOperation::kCreate) &&
           !Allowed(b, r, AclOperation::kCreate, AclResourceType::kTopic,
                    wanted.name));
      if (denied) {
        MetadataResponse::Topic& t = response.topics.emplace_back();
        t.name = wanted.name;
        t.error_code =
            static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      Topic* topic = b.FindTopic(wanted.name, allow_create);
      // A topic this request creates is not answered yet: Kafka asks its
      // controller to create it and answers UNKNOWN_TOPIC_OR_PARTITION at
      // once; the client's next Metadata finds it.
      if (topic == nullptr || !existed) {
        MetadataResponse::Topic& t = response.topics.emplace_back();
        t.name = wanted.name;
        t.error_code =
            static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      response.topics.push_back(Describe(b, *topic));
    }
  }
  // A topic created just now is answered only once it is durable.
  b.commits().AfterCommit(
      [response = std::move(response),
       r = std::move(r)](const absl::Status&) mutable { r.Send(response); });
}

}  // namespace exactly::broker
