// Produce responses lost on connections that stay open (issue 23): the bundled
// broker appends a Produce request and never answers it
// (DropProduceResponsesKeepOpen). With the SDK's defaults the client gives up
// on the request after socket.timeout.ms, reconnects and retries a batch the
// broker already has; every record must arrive exactly once. No timing is
// asserted: Flush's timeout is a liveness bound.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "exactly/broker/faults.h"
#include "spool_test_util.h"

namespace exactly::testing {
namespace {

constexpr char kKeptOpen[] = "dropped_produce_response_kept_open";
// Each lost response costs the client a request timeout (10 s with the SDK's
// defaults); this bounds the whole drain.
constexpr std::chrono::seconds kDrainPatience{180};

class OpenConnectionDropTest : public SpoolTest {
 protected:
  // Responses lost so far, by the broker's count.
  int64_t KeptOpenDrops() const {
    std::map<std::string, int64_t> counts =
        cluster_->broker()->faults().InjectedCounts();
    auto it = counts.find(kKeptOpen);
    return it == counts.end() ? 0 : it->second;
  }

  // Loses the response of `count` produce requests to `topic`, 1 in `one_in`.
  void LoseResponses(const std::string& topic, int count, int one_in) {
    broker::FaultMatch match;
    match.api_key = api::kProduce;
    match.topic = topic;
    cluster_->broker()->faults().DropProduceResponsesKeepOpen(count, one_in,
                                                              match);
  }
};

TEST_F(OpenConnectionDropTest, ProducerDeliversEveryRecordOnce) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  const std::string topic = NewTopic("open-drop-producer", 3);
  // The SDK's defaults: no timeout or back-off of the test's own.
  ProducerOptions o;
  o.bootstrap_servers = bootstrap();
  auto producer = Producer::Create(o);
  ASSERT_TRUE(producer.ok()) << producer.status();
  LoseResponses(topic, /*count=*/2, /*one_in=*/4);

  constexpr int kChunks = 20;
  constexpr int kPerChunk = 15;
  for (int c = 0; c < kChunks; ++c) {
    for (int i = c * kPerChunk; i < (c + 1) * kPerChunk; ++i) {
      ASSERT_TRUE(
          (*producer)
              ->Send({.topic = topic, .value = Value(i), .partition = i % 3})
              .ok());
    }
    // One request per partition per chunk: the fault sees many requests.
    absl::Status s = (*producer)->Flush(kDrainPatience);
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ((*producer)->stats().delivered, uint64_t{kChunks * kPerChunk});
  EXPECT_EQ(KeptOpenDrops(), 2) << "the fault did not fire";

  EXPECT_TRUE(SameRecords(Values(ReadCommitted(topic, 3)),
                          Expected(0, kChunks * kPerChunk - 1)));
}

TEST_F(OpenConnectionDropTest, SpooledProducerDeliversEveryRecordOnce) {
  SKIP_WITHOUT_BUNDLED_BROKER();
  SKIP_WITHOUT_TRANSACTIONS();
  const std::string topic = NewTopic("open-drop-spool", 3);
  SpoolOptions o =
      SpoolOpts(temp_.Sub("spool"), TestCluster::UniqueName("txn"));
  // The SDK's defaults for everything that decides how fast a lost response
  // is noticed and retried (SpoolOpts shortens the transaction timeout, the
  // transactional calls' timeout and the retry back-off).
  const ProducerOptions defaults;
  o.producer.properties.erase("transaction.timeout.ms");
  o.producer.transaction_call_timeout = defaults.transaction_call_timeout;
  o.producer.retry = defaults.retry;
  o.max_batch_records = 20;
  auto spool = SpooledProducer::Create(o);
  ASSERT_TRUE(spool.ok()) << spool.status();
  LoseResponses(topic, /*count=*/2, /*one_in=*/4);

  constexpr int kRecords = 300;
  for (int i = 0; i < kRecords; ++i) {
    absl::Status s =
        (*spool)->Send({.topic = topic, .value = Value(i), .partition = i % 3});
    ASSERT_TRUE(s.ok()) << s;
  }
  absl::Status flushed = (*spool)->Flush(kDrainPatience);
  ASSERT_TRUE(flushed.ok()) << flushed;
  EXPECT_EQ((*spool)->metrics().committed, uint64_t{kRecords});
  EXPECT_EQ((*spool)->metrics().quarantined, 0u);
  EXPECT_EQ(KeptOpenDrops(), 2) << "the fault did not fire";
  ASSERT_TRUE((*spool)->Close().ok());

  const auto records = ReadCommittedAssigned(bootstrap(), topic, 3);
  EXPECT_TRUE(SameRecords(ValuesOf(records), Expected(0, kRecords - 1)));
}

}  // namespace
}  // namespace exactly::testing
