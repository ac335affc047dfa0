// The decoders fed garbage: every captured frame mutated many ways, decoded with every API's
// request struct at every version. Nothing may crash or read out of bounds (CI runs this under
// AddressSanitizer); a decode either succeeds or returns an error.
#include <random>

#include "gtest/gtest.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "support/wire_samples.h"

namespace exactly::protocol {
namespace {

template <class Request>
void TryDecode(std::string_view body) {
  for (int16_t version = 0; version <= 12; ++version) {
    absl::StatusOr<Request> r = DecodeMessage<Request>(body, version, true);
    if (r.ok()) (void)EncodeMessage(*r, version);  // what decoded also re-encodes
  }
}

void DecodeWithEveryApi(std::string_view body) {
  ForEachMessagePair([&]<class Req, class Resp>() {
    TryDecode<Req>(body);
    TryDecode<Resp>(body);
  });
  (void)CheckProduceBatches(body);
  (void)SplitBatches(body);
}

TEST(DecoderFuzzTest, MutatedRealFramesNeverCrashAnyDecoder) {
  std::vector<exactly::testing::WireSample> samples = exactly::testing::LoadWireSamples();
  std::vector<std::string> seeds;
  for (const auto& s : samples) seeds.push_back(s.bytes.substr(4));
  if (seeds.empty()) {
    // Without the captured frames, fuzz from frames we encode ourselves.
    ForEachMessagePair([&]<class Req, class Resp>() {
      seeds.push_back(EncodeMessage(Req{}, 0));
      seeds.push_back(EncodeMessage(Resp{}, 0));
    });
  }
  std::mt19937 rng(7);
  int decoded = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string input = seeds[rng() % seeds.size()];
    int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations && !input.empty(); ++m) {
      switch (rng() % 4) {
        case 0:
          input[rng() % input.size()] = static_cast<char>(rng());
          break;
        case 1:
          input.resize(rng() % input.size());
          break;
        case 2:  // a big length where a length was
          if (input.size() > 4) {
            size_t at = rng() % (input.size() - 4);
            input.replace(at, 4, std::string("\x7f\xff\xff\xf0", 4));
          }
          break;
        default:
          input.insert(rng() % (input.size() + 1), std::string(rng() % 8, '\xff'));
          break;
      }
    }
    absl::StatusOr<ParsedRequest> parsed = ParseRequest(input);
    DecodeWithEveryApi(parsed.ok() ? parsed->body : std::string_view(input));
    ++decoded;
  }
  EXPECT_EQ(decoded, 3000);
}

}  // namespace
}  // namespace exactly::protocol
