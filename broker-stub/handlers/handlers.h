// One function per Kafka API, each in its own file (handlers/<api>.cc): it
// turns a decoded request into calls on the broker's state and answers through
// the Responder. The table in api_table.cc maps API keys and versions to these
// functions.
#ifndef EXACTLY_BROKER_HANDLERS_HANDLERS_H_
#define EXACTLY_BROKER_HANDLERS_HANDLERS_H_

#include "cluster/broker_state.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"
#include "server/responder.h"
#include "util/shared_buffer.h"

namespace exactly::broker {

using protocol::RequestHeader;

void HandleApiVersions(BrokerState& b, const RequestHeader& h,
                       protocol::ApiVersionsRequest& request, Responder r);
void HandleMetadata(BrokerState& b, const RequestHeader& h,
                    protocol::MetadataRequest& request, Responder r);
void HandleProduce(BrokerState& b, const RequestHeader& h,
                   protocol::ProduceRequest& request, const SharedBuffer& frame,
                   Responder r);
void HandleFetch(BrokerState& b, const RequestHeader& h,
                 protocol::FetchRequest& request, Responder r);
void HandleListOffsets(BrokerState& b, const RequestHeader& h,
                       protocol::ListOffsetsRequest& request, Responder r);
void HandleOffsetForLeaderEpoch(BrokerState& b, const RequestHeader& h,
                                protocol::OffsetForLeaderEpochRequest& request,
                                Responder r);
void HandleInitProducerId(BrokerState& b, const RequestHeader& h,
                          protocol::InitProducerIdRequest& request,
                          Responder r);
void HandleCreateTopics(BrokerState& b, const RequestHeader& h,
                        protocol::CreateTopicsRequest& request, Responder r);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_HANDLERS_H_
