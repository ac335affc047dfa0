// ApiVersions: which APIs and versions this broker speaks (exactly those in
// api_table.cc).
#include "handlers/api_table.h"
#include "handlers/handlers.h"

namespace exactly::broker {

void HandleApiVersions(BrokerState&, const RequestHeader&,
                       protocol::ApiVersionsRequest&, Responder r) {
  protocol::ApiVersionsResponse response;
  for (const ApiHandler& api : ApiHandlers()) {
    response.api_keys.push_back(
        {static_cast<int16_t>(api.key), api.min_version, api.max_version, {}});
  }
  r.Send(response);
}

}  // namespace exactly::broker
