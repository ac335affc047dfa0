// Every API whose messages this broker can decode and encode, in one list, so
// that tests and the fuzzer cover each one without a list of their own.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_ALL_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_ALL_H_

#include "protocol/messages/api_versions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/produce.h"

namespace exactly::protocol {

// Calls f.template operator()<Request, Response>() for every API with message
// structs.
template <class F>
void ForEachMessagePair(F&& f) {
  f.template operator()<ProduceRequest, ProduceResponse>();
  f.template operator()<FetchRequest, FetchResponse>();
  f.template operator()<ListOffsetsRequest, ListOffsetsResponse>();
  f.template operator()<MetadataRequest, MetadataResponse>();
  f.template operator()<ApiVersionsRequest, ApiVersionsResponse>();
  f.template operator()<CreateTopicsRequest, CreateTopicsResponse>();
  f.template operator()<InitProducerIdRequest, InitProducerIdResponse>();
}

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_ALL_H_
