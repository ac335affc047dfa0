// ListGroups: every group this broker coordinates, with its protocol type,
// (v4+) its state and (v5+) its type, optionally only those in the states and
// of the types asked for. Every group here is a classic one (no KIP-848
// consumer groups), so a types filter without "classic" lists none.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "group/group_coordinator.h"
#include "handlers/group_handlers.h"

namespace exactly::broker {

void HandleListGroups(BrokerState& b, const RequestHeader& h,
                      protocol::ListGroupsRequest& request, Responder r) {
  protocol::ListGroupsResponse response;
  if (auto injected = InjectedError(b, h)) {
    response.error_code = Code(*injected);
  } else {
    std::vector<std::string> states;
    if (h.api_version >= 4) states = request.states_filter;
    // Kafka parses the type names case-insensitively.
    const bool classic_asked =
        h.api_version < 5 || request.types_filter.empty() ||
        std::any_of(request.types_filter.begin(), request.types_filter.end(),
                    [](const std::string& t) {
                      return absl::AsciiStrToLower(t) == "classic";
                    });
    // Kafka lists every group to those who may DESCRIBE the cluster, and to
    // the others the groups they may DESCRIBE.
    const bool all = AllowedOnCluster(b, r, AclOperation::kDescribe);
    if (classic_asked) {
      for (GroupOverview& g : b.groups().ListGroups(states)) {
        if (!all && !Allowed(b, r, AclOperation::kDescribe,
                             AclResourceType::kGroup, g.group_id))
          continue;
        response.groups.push_back({std::move(g.group_id),
                                   std::move(g.protocol_type),
                                   std::move(g.state),
                                   "classic",
                                   {}});
      }
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
