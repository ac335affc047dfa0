// The APIs this broker serves and the versions it advertises in ApiVersions:
// exactly the versions whose messages and behaviour are implemented.
#ifndef EXACTLY_BROKER_HANDLERS_API_TABLE_H_
#define EXACTLY_BROKER_HANDLERS_API_TABLE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "cluster/broker_state.h"
#include "protocol/request_header.h"
#include "server/responder.h"

namespace exactly::broker {

// `body` lies inside `frame`; a handler that keeps part of the request (Produce
// keeps its batches) keeps the frame.
using HandlerFn = void (*)(BrokerState& b, const protocol::RequestHeader& h,
                           std::string_view body, const SharedBuffer& frame,
                           Responder r);

struct ApiHandler {
  protocol::ApiKey key;
  int16_t min_version;
  int16_t max_version;
  HandlerFn handle;
};

// Every API, from the area tables below.
const std::vector<ApiHandler>& ApiHandlers();
const ApiHandler* FindApiHandler(int16_t api_key);

// One table per area, each in its own file, so that the APIs of an area are
// listed where its handlers are (core_apis.cc, group_apis.cc,
// transaction_apis.cc, admin_apis.cc, security_apis.cc).
std::vector<ApiHandler> CoreApis();
std::vector<ApiHandler> GroupApis();
std::vector<ApiHandler> TransactionApis();
std::vector<ApiHandler> AdminApis();
std::vector<ApiHandler> SecurityApis();

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_API_TABLE_H_
