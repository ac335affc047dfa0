// ListGroups: every group this broker coordinates, with its protocol type
// and (v4+) its state, optionally only those in the states asked for.
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
    for (GroupOverview& g : b.groups().ListGroups(states)) {
      response.groups.push_back({std::move(g.group_id),
                                 std::move(g.protocol_type),
                                 std::move(g.state),
                                 {}});
    }
  }
  r.Send(response);
}

}  // namespace exactly::broker
