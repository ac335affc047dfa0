// Encoder::Records with a splice list: owned slices of at least kMinSpliceBytes
// are recorded as splices (not copied), smaller or unowned ones are copied, and
// the bytes with the splices put back at their positions are exactly what the
// copying encoder writes.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "protocol/messages/fetch.h"
#include "protocol/serde.h"

namespace exactly::protocol {
namespace {

std::string WithSplices(const std::string& bytes,
                        const std::vector<Splice>& splices) {
  std::string out;
  size_t pos = 0;
  for (const Splice& s : splices) {
    out.append(bytes, pos, s.at - pos);
    out.append(s.data);
    pos = s.at;
  }
  out.append(bytes, pos);
  return out;
}

FetchResponse ResponseWith(const std::vector<std::string>& batches,
                           bool owned) {
  FetchResponse response;
  FetchResponse::Topic& t = response.topics.emplace_back();
  t.name = "t";
  for (int32_t p = 0; p < 2; ++p) {  // two partitions: splices in two places
    FetchResponse::Partition& rp = t.partitions.emplace_back();
    rp.index = p;
    rp.high_watermark = 10;
    for (const std::string& b : batches) {
      if (!owned) {  // views of `batches`, which outlives the encoding
        rp.records.slices.push_back(b);
        continue;
      }
      broker::SharedBuffer owner = broker::CopyToSharedBuffer(b);
      rp.records.slices.emplace_back(owner.get(), b.size());
      rp.records.owners.push_back(std::move(owner));
    }
  }
  return response;
}

TEST(RecordSpliceTest, SplicedEncodingEqualsCopiedEncoding) {
  const std::vector<std::string> batches = {
      std::string(kMinSpliceBytes, 'a'), std::string(10, 'b'),
      std::string(3 * kMinSpliceBytes, 'c'),
      std::string(kMinSpliceBytes - 1, 'd')};
  for (int16_t version : {4, 11, 12}) {
    bool flexible = IsFlexible(ApiKey::kFetch, version);
    std::string copied;
    Encoder plain(&copied, version, flexible);
    ResponseWith(batches, /*owned=*/false).Serde(plain);

    FetchResponse owned = ResponseWith(batches, /*owned=*/true);
    std::string bytes;
    std::vector<Splice> splices;
    Encoder splicing(&bytes, version, flexible, &splices);
    owned.Serde(splicing);

    // Two large batches in each of two partitions; the small ones are copied.
    ASSERT_EQ(splices.size(), 4u) << version;
    for (const Splice& s : splices) {
      EXPECT_GE(s.data.size(), kMinSpliceBytes);
      EXPECT_NE(s.owner, nullptr);
    }
    EXPECT_LT(bytes.size(), 2 * 2 * kMinSpliceBytes);
    EXPECT_EQ(WithSplices(bytes, splices), copied) << version;

    // The splices keep the data alive once the response lets go of it.
    owned = FetchResponse();
    EXPECT_EQ(WithSplices(bytes, splices), copied) << version;
  }
}

TEST(RecordSpliceTest, WithoutASpliceListOwnedSlicesAreCopied) {
  const std::vector<std::string> batches = {std::string(4096, 'x')};
  std::string copied = EncodeMessage(ResponseWith(batches, false), 11);
  EXPECT_EQ(EncodeMessage(ResponseWith(batches, true), 11), copied);
}

}  // namespace
}  // namespace exactly::protocol
