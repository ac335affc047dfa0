// A request frame (size prefix removed, as the server hands it to
// DispatchRequest): the header, then the body decoded as the header's API and
// version, as handlers/decoded.h does (trailing bytes allowed). What decodes
// must re-encode to something that decodes strictly to the same message, and
// whose encoding is stable. Produce bodies also go through the broker's
// checks of their records.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/messages/all.h"
#include "protocol/produce_request_check.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"

namespace exactly::protocol {
namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

template <class Request>
void CheckRoundTrip(const Request& decoded, int16_t version) {
  const std::string encoded = EncodeMessage(decoded, version);
  absl::StatusOr<Request> again = DecodeMessage<Request>(encoded, version);
  Check(again.ok());
  if constexpr (requires { decoded == *again; }) Check(decoded == *again);
  Check(EncodeMessage(*again, version) == encoded);
}

void CheckProduce(const ProduceRequest& request, int16_t version) {
  for (const ProduceRequest::Topic& topic : request.topics) {
    for (const ProduceRequest::Partition& partition : topic.partitions) {
      std::string_view records = partition.records.Contiguous();
      (void)FirstBatchIsTransactional(records);
      if (CheckProduceRecords(version, records).ok()) {
        (void)CheckProduceBatches(records, {.max_decompressed_bytes = 1 << 20});
      }
    }
  }
}

void DecodeBody(const ParsedRequest& parsed) {
  const RequestHeader& h = parsed.header;
  ForEachMessagePair([&]<class Request, class Response>() {
    if (static_cast<int16_t>(Request::kApiKey) != h.api_key) return;
    absl::StatusOr<Request> request =
        DecodeMessage<Request>(parsed.body, h.api_version,
                               /*allow_trailing=*/true);
    if (!request.ok()) return;
    CheckRoundTrip(*request, h.api_version);
    if constexpr (std::is_same_v<Request, ProduceRequest>) {
      CheckProduce(*request, h.api_version);
    }
  });
}

void CheckHeaderRoundTrip(const RequestHeader& h) {
  std::string encoded;
  EncodeRequestHeader(h, &encoded);
  absl::StatusOr<ParsedRequest> again = ParseRequest(encoded);
  Check(again.ok());
  Check(again->body.empty());
  const RequestHeader& g = again->header;
  Check(g.api_key == h.api_key && g.api_version == h.api_version &&
        g.correlation_id == h.correlation_id && g.client_id == h.client_id &&
        g.tagged_fields == h.tagged_fields);
}

}  // namespace
}  // namespace exactly::protocol

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace exactly::protocol;
  std::string_view frame(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ParsedRequest> parsed = ParseRequest(frame);
  if (!parsed.ok()) return 0;
  CheckHeaderRoundTrip(parsed->header);
  DecodeBody(*parsed);
  return 0;
}
