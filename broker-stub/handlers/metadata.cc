// Metadata: this broker as the whole cluster, and the topics asked for (created
// on demand when auto-creation is on and the client allows it).
#include "absl/strings/str_cat.h"
#include "handlers/handlers.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::MetadataResponse;

MetadataResponse::Topic Describe(const BrokerState& b, const Topic& topic) {
  MetadataResponse::Topic t;
  t.name = topic.name;
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
  response.brokers.push_back({b.options().node_id,
                              b.advertised_host(),
                              static_cast<int32_t>(b.advertised_port()),
                              std::nullopt,
                              {}});
  response.cluster_id = b.options().cluster_id;
  response.controller_id = b.options().node_id;
  if (request.AllTopics(h.api_version)) {
    for (const auto& [name, topic] : b.topics().all()) {
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
      Topic* topic = b.FindTopic(wanted.name, allow_create);
      if (topic == nullptr) {
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
