// OffsetFetch: a group's committed offsets (all of them when the request
// names no topics). With RequireStable (v7+, what read_committed consumers
// send) a partition whose offset is still being written, or held by an open
// transaction, answers UNSTABLE_OFFSET_COMMIT, and the client retries. v8
// asks about many groups at once.
#include <map>

#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::OffsetFetchRequest;
using protocol::OffsetFetchResponse;

struct GroupAnswer {
  ErrorCode error = ErrorCode::kNone;
  std::vector<OffsetFetchResponse::Topic> topics;
};

GroupAnswer FetchGroup(BrokerState& b, const RequestHeader& h,
                       const OffsetFetchRequest::Group& g, bool require_stable,
                       const Responder& r) {
  GroupAnswer answer;
  const int16_t v = h.api_version;
  std::optional<std::vector<TopicPartition>> wanted;
  if (g.topics.has_value()) {
    wanted.emplace();
    for (const OffsetFetchRequest::Topic& t : *g.topics) {
      for (int32_t p : t.partition_indexes) wanted->emplace_back(t.name, p);
    }
  }
  std::vector<FetchedOffset> fetched;
  if (auto injected =
          GroupRequestError(b, h, g.group_id, r, AclOperation::kDescribe)) {
    answer.error = *injected;
    // Before v2 there is no group-level error: each partition carries it.
    if (v >= 2 || !wanted) return answer;
    for (const TopicPartition& tp : *wanted) {
      FetchedOffset& f = fetched.emplace_back();
      f.topic = tp.first;
      f.partition = tp.second;
      f.error = *injected;
    }
  } else {
    fetched = b.groups().FetchOffsets(g.group_id, wanted, require_stable);
  }
  // Topics in the order asked (or first seen), partitions within them.
  std::map<std::string, size_t> topic_index;
  for (FetchedOffset& f : fetched) {
    // Kafka's check: DESCRIBE on the topic. Topics not named are left out.
    if (f.error == ErrorCode::kNone &&
        !Allowed(b, r, AclOperation::kDescribe, AclResourceType::kTopic,
                 f.topic)) {
      if (!wanted) continue;
      f.error = ErrorCode::kTopicAuthorizationFailed;
    }
    if (f.error == ErrorCode::kNone) {
      if (auto e = b.faults().TakeError(h.api_key, &f.topic, f.partition)) {
        f.error = static_cast<ErrorCode>(*e);
      }
    }
    auto [it, added] = topic_index.emplace(f.topic, answer.topics.size());
    if (added) answer.topics.emplace_back().name = f.topic;
    OffsetFetchResponse::Partition& p =
        answer.topics[it->second].partitions.emplace_back();
    p.index = f.partition;
    if (f.error == ErrorCode::kNone) {
      p.committed_offset = f.offset;
      p.committed_leader_epoch = f.leader_epoch;
      p.metadata = std::move(f.metadata);
    } else {
      p.committed_offset = -1;
      p.metadata = "";
      p.error_code = Code(f.error);
    }
  }
  if (v < 2) answer.error = ErrorCode::kNone;
  return answer;
}

}  // namespace

void HandleOffsetFetch(BrokerState& b, const RequestHeader& h,
                       OffsetFetchRequest& request, Responder r) {
  const int16_t v = h.api_version;
  const bool require_stable = v >= 7 && request.require_stable;
  OffsetFetchResponse response;
  if (v >= 8) {
    for (const OffsetFetchRequest::Group& g : request.groups) {
      GroupAnswer a = FetchGroup(b, h, g, require_stable, r);
      response.groups.push_back(
          {g.group_id, std::move(a.topics), Code(a.error), {}});
    }
  } else {
    OffsetFetchRequest::Group g{request.group_id, request.topics, {}};
    GroupAnswer a = FetchGroup(b, h, g, require_stable, r);
    response.topics = std::move(a.topics);
    response.error_code = Code(a.error);
  }
  r.Send(response);
}

}  // namespace exactly::broker
