// The exactly-once checker in the suite: each workload against the bundled
// broker while a nemesis injects faults, then an independent read_committed
// reader and the checks (eos/checker.h). Fixed seeds, about ten seconds of
// faults each; scripts/eos-soak.sh runs the same for as long as one likes.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "eos/checker.h"
#include "eos/nemesis.h"
#include "eos/reader.h"
#include "eos/workload.h"
#include "exactly/broker/broker.h"
#include "support/temp_dir.h"

namespace exactly::eos {
namespace {

using testing::TempDir;

struct CheckedRun {
  Workload workload;
  std::set<Fault> faults;
  bool persistent = false;  // a data dir, fsync per write (power loss safe)
  uint64_t seed = 1;
  double abort_probability = 0.3;
  std::chrono::milliseconds duration{10000};
  int32_t partitions = 3;
  // Issue 16's shape: 4 records per transaction, 2 per partition, so that a
  // reused sequence range matches an earlier batch exactly.
  bool fixed_shape = false;
  // Faults armed once before the workload starts (beside the nemesis).
  std::function<void(broker::Faults&)> standing_faults;
};

class EosCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* env = std::getenv("EXACTLY_TEST_BOOTSTRAP");
        (env != nullptr && *env != '\0') ||
        std::getenv("EXACTLY_KAFKA_CLUSTER") != nullptr) {
      GTEST_SKIP() << "the checker's faults need the bundled broker (its "
                      "fault injection); on Apache Kafka the SDK suite's "
                      "kafka_faults_test kills brokers for real";
    }
  }

  // What a run found, for tests that expect a violation.
  struct Found {
    CheckReport report;
    int sequence_reuse_warnings = 0;  // the broker's diagnostic
  };

  // Runs, reads back and checks; with `expect_ok` the checks must pass.
  Found Check(const CheckedRun& run, bool expect_ok = true) {
    Found found;
    Run(run, expect_ok, found);
    return found;
  }

  void Run(const CheckedRun& run, bool expect_ok, Found& found) {
    broker::BrokerOptions options;
    options.default_partitions = run.partitions;
    options.transaction_abort_check_interval_ms = 200;
    if (run.persistent) {
      data_ = std::make_unique<TempDir>();
      options.data_dir = data_->Sub("broker");
      options.flush.every_messages = 1;
    }
    auto started = broker::Broker::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    std::unique_ptr<broker::Broker> broker = std::move(*started);

    const std::string name =
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    WorkloadOptions w;
    w.bootstrap_servers = broker->bootstrap_servers();
    w.topic = absl::StrCat(name, "-out");
    w.input_topic = absl::StrCat(name, "-in");
    w.partitions = run.partitions;
    w.writer = absl::StrCat(name, "-", run.seed);
    w.seed = run.seed;
    w.duration = run.duration;
    w.transactions = 1'000'000;  // the duration ends the run
    w.abort_probability = run.abort_probability;
    if (run.fixed_shape) {
      w.min_records_per_transaction = w.max_records_per_transaction = 4;
      w.round_robin_partitions = true;
    }
    w.input_records = 1500;
    spool_ = std::make_unique<TempDir>();
    w.spool_dir = spool_->Sub("spool");
    ASSERT_TRUE(broker->CreateTopic(w.topic, run.partitions).ok());
    ASSERT_TRUE(broker->CreateTopic(w.input_topic, run.partitions).ok());

    Nemesis nemesis(broker.get(),
                    {.seed = run.seed * 7919 + 1, .faults = run.faults});
    if (run.standing_faults) run.standing_faults(broker->faults());
    w.on_ready = [&nemesis] { nemesis.Start(); };
    WorkloadResult result = run.workload(w);
    nemesis.Stop();

    // The coordinator aborts a transaction left open within its timeout
    // (10 s in the workloads): wait longer than that for read_committed.
    absl::StatusOr<ReadResult> read = ReadCommitted(
        broker->bootstrap_servers(), result.topics, std::chrono::seconds(40));
    ASSERT_TRUE(read.ok()) << read.status();
    CheckReport report = eos::Check(result.attempts, *read);
    for (const std::string& line : broker->faults().History()) {
      found.sequence_reuse_warnings +=
          line.find("sequence reuse") != std::string::npos;
    }
    found.report = report;
    fprintf(stderr,
            "%s: %zu faults injected; %lld epoch bumps, %lld rebuilds or "
            "restarts\n%s\n",
            name.c_str(), nemesis.log().size(),
            static_cast<long long>(result.epoch_bumps),
            static_cast<long long>(result.rebuilds), report.Summary().c_str());
    EXPECT_TRUE(nemesis.errors().empty())
        << "the nemesis failed: " << nemesis.errors().front();
    EXPECT_TRUE(result.errors.empty()) << result.errors.front();
    if (expect_ok) {
      EXPECT_TRUE(report.ok()) << report.Summary();
      // Nothing was numbered twice.
      EXPECT_EQ(found.sequence_reuse_warnings, 0);
    }
    // A run that committed nothing proves nothing.
    EXPECT_GT(report.attempts_committed, 20) << report.Summary();
    if (!run.faults.empty()) {
      EXPECT_GT(nemesis.log().size(), 10u);
    }
  }

 private:
  std::unique_ptr<TempDir> data_;
  std::unique_ptr<TempDir> spool_;
};

// The case the checker was written for: every other transaction aborted a
// few milliseconds after its sends while 1 produce response in 4 is lost.
TEST_F(EosCheckTest, AbortsAfterLostResponses) {
  Check({.workload = RunVerbs,
         .faults = {},
         .abort_probability = 0.5,
         .partitions = 2,
         .fixed_shape = true,
         .standing_faults = [](broker::Faults& f) {
           f.DropProduceResponses(/*count=*/-1, /*one_in=*/4);
         }});
}

// librdkafka alone, to confirm the diagnosis: the same run as above loses
// committed records, and each loss is a sequence reuse the broker reports;
// with the SDK's defence applied by hand nothing is lost.
TEST_F(EosCheckTest, RawLibrdkafkaLosesRecordsAfterAbortsUnlessANewEpoch) {
  const CheckedRun run{.workload = RunRawLibrdkafka,
                       .faults = {},
                       .abort_probability = 0.5,
                       .partitions = 2,
                       .fixed_shape = true,
                       .standing_faults = [](broker::Faults& f) {
                         f.DropProduceResponses(/*count=*/-1, /*one_in=*/4);
                       }};
  Found as_is = Check(run, /*expect_ok=*/false);
  fprintf(stderr,
          "librdkafka %s as is: %lld committed records missing, %d "
          "sequence reuses reported by the broker\n",
          rd_kafka_version_str(), static_cast<long long>(as_is.report.missing),
          as_is.sequence_reuse_warnings);
  // Losses come only from reused sequences.
  if (as_is.report.missing > 0) {
    EXPECT_GT(as_is.sequence_reuse_warnings, 0);
  }
  EXPECT_EQ(as_is.report.duplicated, 0);
  EXPECT_EQ(as_is.report.aborted_visible, 0);
  if (rd_kafka_version() == 0x020002ff) {
    // The version the diagnosis was made on (Debian 12's) has the bug;
    // another version may not, and then this run proves the rest only.
    EXPECT_GT(as_is.report.missing, 0) << as_is.report.Summary();
  }

  CheckedRun fixed = run;
  fixed.workload = RunRawLibrdkafkaWithWorkaround;
  fixed.seed = 2;
  Found with_workaround = Check(fixed);
  EXPECT_EQ(with_workaround.report.missing, 0);
}

TEST_F(EosCheckTest, TransactUnderFaults) {
  Check({.workload = RunTransact, .faults = InMemoryFaults(), .seed = 2});
}

TEST_F(EosCheckTest, VerbsUnderFaults) {
  Check({.workload = RunVerbs, .faults = InMemoryFaults(), .seed = 3});
}

TEST_F(EosCheckTest, ProcessorUnderFaults) {
  Check({.workload = RunProcessor, .faults = InMemoryFaults(), .seed = 4});
}

TEST_F(EosCheckTest, SpoolUnderFaults) {
  Check({.workload = RunSpool, .faults = InMemoryFaults(), .seed = 5});
}

TEST_F(EosCheckTest, TransactUnderRestarts) {
  Check({.workload = RunTransact,
         .faults = AllFaults(),
         .persistent = true,
         .seed = 6});
}

TEST_F(EosCheckTest, ProcessorUnderRestarts) {
  Check({.workload = RunProcessor,
         .faults = AllFaults(),
         .persistent = true,
         .seed = 7});
}

TEST_F(EosCheckTest, SpoolUnderRestarts) {
  Check({.workload = RunSpool,
         .faults = AllFaults(),
         .persistent = true,
         .seed = 8});
}

}  // namespace
}  // namespace exactly::eos
