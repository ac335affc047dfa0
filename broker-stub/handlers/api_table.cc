#include "handlers/api_table.h"

#include "absl/strings/str_cat.h"
#include "handlers/handlers.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ApiKey;

// Decodes the body as Request, then calls the typed handler. A body that does
// not decode closes the connection (the protocol has no way to answer a request
// it cannot read). Bytes after the body are ignored, as Kafka's broker ignores
// them (librdkafka < 2.1 sends one extra after ListGroups v3+).
template <class Request,
          void (*Handle)(BrokerState&, const protocol::RequestHeader&, Request&,
                         Responder)>
void Decoded(BrokerState& b, const protocol::RequestHeader& h,
             std::string_view body, Responder r) {
  absl::StatusOr<Request> request = protocol::DecodeMessage<Request>(
      body, h.api_version, /*allow_trailing=*/true);
  if (!request.ok()) {
    r.CloseConnection(absl::StrCat(
        "malformed ", std::string(protocol::ApiKeyName(h.api_key)), " v",
        h.api_version, " request: ", request.status().message()));
    return;
  }
  Handle(b, h, *request, std::move(r));
}

std::vector<ApiHandler>* MakeTable() {
  using namespace protocol;  // NOLINT: the message types, in one table
  return new std::vector<ApiHandler>{
      // Produce: v0-2 decode, but their message sets (magic 0/1) get
      // UNSUPPORTED_FOR_MESSAGE_FORMAT; v3+ carry record batch v2.
      {ApiKey::kProduce, 0, 8, &Decoded<ProduceRequest, HandleProduce>},
      // Fetch v4+ (isolation level, record batch v2 responses).
      {ApiKey::kFetch, 4, 11, &Decoded<FetchRequest, HandleFetch>},
      {ApiKey::kListOffsets, 0, 5,
       &Decoded<ListOffsetsRequest, HandleListOffsets>},
      {ApiKey::kMetadata, 0, 8, &Decoded<MetadataRequest, HandleMetadata>},
      {ApiKey::kApiVersions, 0, 3,
       &Decoded<ApiVersionsRequest, HandleApiVersions>},
      {ApiKey::kCreateTopics, 0, 4,
       &Decoded<CreateTopicsRequest, HandleCreateTopics>},
      {ApiKey::kInitProducerId, 0, 4,
       &Decoded<InitProducerIdRequest, HandleInitProducerId>},
  };
}

}  // namespace

const std::vector<ApiHandler>& ApiHandlers() {
  static const std::vector<ApiHandler>* table = MakeTable();
  return *table;
}

const ApiHandler* FindApiHandler(int16_t api_key) {
  for (const ApiHandler& h : ApiHandlers()) {
    if (static_cast<int16_t>(h.key) == api_key) return &h;
  }
  return nullptr;
}

}  // namespace exactly::broker
