// DeleteRecords: moves each partition's log start offset (its low watermark) up
// to the offset asked for (-1: the high watermark), deleting the whole batches
// below it. Fetches below the new start get OFFSET_OUT_OF_RANGE and ListOffsets
// EARLIEST returns it. Answered once the new start is durable.
#include "absl/strings/str_cat.h"
#include "cluster/cluster_membership.h"
#include "cluster/topic_admin.h"
#include "handlers/admin_handlers.h"
#include "util/logging.h"

namespace exactly::broker {

void HandleDeleteRecords(BrokerState& b, const RequestHeader& h,
                         protocol::DeleteRecordsRequest& request, Responder r) {
  protocol::DeleteRecordsResponse response;
  for (const auto& t : request.topics) {
    protocol::DeleteRecordsResponse::Topic& rt = response.topics.emplace_back();
    rt.name = t.name;
    // Kafka's check: DELETE on the topic.
    const bool may_delete =
        Allowed(b, r, AclOperation::kDelete, AclResourceType::kTopic, t.name);
    for (const auto& p : t.partitions) {
      protocol::DeleteRecordsResponse::Partition& rp =
          rt.partitions.emplace_back();
      rp.index = p.index;
      if (auto injected = b.faults().TakeError(h.api_key, &t.name, p.index)) {
        rp.error_code = *injected;
        continue;
      }
      if (!may_delete) {
        rp.error_code = static_cast<int16_t>(
            protocol::ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      // In a cluster only the leader moves a log start (its followers keep
      // theirs: a limit the README names).
      if (protocol::ErrorCode leadership = LeadershipError(b, t.name, p.index);
          leadership != protocol::ErrorCode::kNone) {
        rp.error_code = static_cast<int16_t>(leadership);
        continue;
      }
      DeleteRecordsOutcome outcome =
          DeleteRecords(b, t.name, p.index, p.offset);
      rp.error_code = outcome.error.code_value();
      rp.low_watermark = outcome.low_watermark;
      if (outcome.error.ok()) {
        LogInfo("deleted records of ", t.name, "[", p.index, "] below ",
                outcome.low_watermark);
      }
    }
  }
  b.commits().AfterCommit(
      [response = std::move(response),
       r = std::move(r)](const absl::Status&) mutable { r.Send(response); });
}

}  // namespace exactly::broker
