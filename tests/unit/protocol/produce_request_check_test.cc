#include "protocol/produce_request_check.h"

#include <string>

#include "gtest/gtest.h"
#include "protocol/record_batch.h"

namespace exactly::protocol {
namespace {

std::string Build(int16_t attributes) {
  RecordBatchSpec spec;
  spec.attributes = attributes;
  return *BuildRecordBatch(spec, {{"k", "v", {}, 0}});
}

TEST(ProduceRequestCheckTest, ExactlyOneBatchFromV3) {
  std::string one = Build(0);
  EXPECT_TRUE(CheckProduceRecords(3, one).ok());
  EXPECT_EQ(CheckProduceRecords(3, one + one).error, ErrorCode::kInvalidRecord);
  EXPECT_EQ(CheckProduceRecords(8, one + one).error, ErrorCode::kInvalidRecord);
  // Kafka does not check older requests.
  EXPECT_TRUE(CheckProduceRecords(2, one + one).ok());
  // A partial batch after the first is not a second one (Kafka's iterator
  // stops before it); CheckProduceBatches refuses it as corrupt.
  EXPECT_TRUE(CheckProduceRecords(8, one + one.substr(0, 30)).ok());
}

TEST(ProduceRequestCheckTest, ZstdFromV7) {
  std::string zstd = Build(static_cast<int16_t>(Compression::kZstd));
  EXPECT_EQ(CheckProduceRecords(6, zstd).error,
            ErrorCode::kUnsupportedCompressionType);
  EXPECT_TRUE(CheckProduceRecords(7, zstd).ok());
  EXPECT_TRUE(
      CheckProduceRecords(6, Build(static_cast<int16_t>(Compression::kLz4)))
          .ok());
}

TEST(ProduceRequestCheckTest, TransactionalMeansTheFirstBatch) {
  std::string txn = Build(kAttrTransactional);
  std::string plain = Build(0);
  EXPECT_TRUE(FirstBatchIsTransactional(txn));
  EXPECT_TRUE(FirstBatchIsTransactional(txn + plain));
  EXPECT_FALSE(FirstBatchIsTransactional(plain + txn));
  EXPECT_FALSE(FirstBatchIsTransactional(""));
}

}  // namespace
}  // namespace exactly::protocol
