// DescribeGroups: each group's state, protocol and members (with their
// subscriptions and assignments while the group is Stable). A group this
// broker does not know is described as Dead, as Kafka does before v6.
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

namespace {

using protocol::DescribeGroupsResponse;

// Without an authorizer every operation on a group is allowed: READ (3),
// DELETE (6) and DESCRIBE (8), as bits of Kafka's AclOperation codes.
constexpr int32_t kGroupOperations = (1 << 3) | (1 << 6) | (1 << 8);

// With an authorizer, those the sender is allowed.
int32_t AuthorizedGroupOperations(const BrokerState& b, const Responder& r,
                                  const std::string& group) {
  if (b.authorizer() == nullptr) return kGroupOperations;
  int32_t bits = 0;
  for (AclOperation op :
       {AclOperation::kRead, AclOperation::kDelete, AclOperation::kDescribe}) {
    if (Allowed(b, r, op, AclResourceType::kGroup, group))
      bits |= 1 << static_cast<int>(op);
  }
  return bits;
}

}  // namespace

void HandleDescribeGroups(BrokerState& b, const RequestHeader& h,
                          protocol::DescribeGroupsRequest& request,
                          Responder r) {
  DescribeGroupsResponse response;
  for (const std::string& group_id : request.groups) {
    DescribeGroupsResponse::Group& g = response.groups.emplace_back();
    g.group_id = group_id;
    if (auto injected =
            GroupRequestError(b, h, group_id, r, AclOperation::kDescribe)) {
      g.error_code = Code(*injected);
      continue;
    }
    GroupSummary s = b.groups().DescribeGroup(group_id);
    g.group_state = std::move(s.state);
    g.protocol_type = std::move(s.protocol_type);
    g.protocol_data = std::move(s.protocol);
    for (GroupSummary::Member& m : s.members) {
      g.members.push_back({std::move(m.id),
                           std::move(m.instance_id),
                           std::move(m.client_id),
                           std::move(m.client_host),
                           std::move(m.metadata),
                           std::move(m.assignment),
                           {}});
    }
    if (h.api_version >= 3 && request.include_authorized_operations) {
      g.authorized_operations = AuthorizedGroupOperations(b, r, group_id);
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
