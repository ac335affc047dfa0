// From a request frame to its handler: parse the header, pick the handler for
// the API and version, and answer what cannot be handled (unknown API,
// unsupported version).
#ifndef EXACTLY_BROKER_HANDLERS_DISPATCH_H_
#define EXACTLY_BROKER_HANDLERS_DISPATCH_H_

#include <memory>
#include <string>

#include "cluster/broker_state.h"
#include "server/connection.h"
#include "util/shared_buffer.h"

namespace exactly::broker {

void DispatchRequest(BrokerState& b,
                     const std::shared_ptr<Connection>& connection,
                     SharedBuffer frame, size_t size, uint64_t slot);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_DISPATCH_H_
