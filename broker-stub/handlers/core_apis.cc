// The core APIs: versions, metadata, produce and fetch, offsets, idempotent
// producer ids.
#include "handlers/api_table.h"
#include "handlers/decoded.h"
#include "handlers/handlers.h"

namespace exactly::broker {

std::vector<ApiHandler> CoreApis() {
  using namespace protocol;  // NOLINT: the message types, in one table
  return {
      // Produce: v0-2 decode, but their message sets (magic 0/1) get
      // UNSUPPORTED_FOR_MESSAGE_FORMAT; v3+ carry record batch v2.
      {ApiKey::kProduce, 0, 8,
       &DecodedWithFrame<ProduceRequest, HandleProduce>},
      // Fetch v4+ (isolation level, record batch v2 responses).
      {ApiKey::kFetch, 4, 11, &Decoded<FetchRequest, HandleFetch>},
      // ListOffsets v6+ flexible, v7 the largest timestamp (-3, KIP-734),
      // v8 the earliest local offset (-4, KIP-405).
      {ApiKey::kListOffsets, 0, 8,
       &Decoded<ListOffsetsRequest, HandleListOffsets>},
      {ApiKey::kOffsetForLeaderEpoch, 0, 4,
       &Decoded<OffsetForLeaderEpochRequest, HandleOffsetForLeaderEpoch>},
      {ApiKey::kMetadata, 0, 8, &Decoded<MetadataRequest, HandleMetadata>},
      {ApiKey::kApiVersions, 0, 3,
       &Decoded<ApiVersionsRequest, HandleApiVersions>},
      {ApiKey::kCreateTopics, 0, 4,
       &Decoded<CreateTopicsRequest, HandleCreateTopics>},
      {ApiKey::kInitProducerId, 0, 4,
       &Decoded<InitProducerIdRequest, HandleInitProducerId>},
  };
}

}  // namespace exactly::broker
