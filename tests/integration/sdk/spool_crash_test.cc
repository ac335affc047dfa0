// The spooled producer killed with SIGKILL at random moments, again and
// again (during sends, syncs, transactions, commits and recoveries), while
// the broker drops produce responses after appending and restarts once as
// if it crashed (on Apache Kafka: the transaction coordinator's, or the
// leader's, JVM is SIGKILLed once and started again). Each new process resumes
// from the spool. Afterwards a read_committed consumer sees every record
// exactly once, in order per partition; no record was acknowledged twice.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "spool_test_util.h"
#include "support/child_process.h"

namespace exactly::testing {
namespace {

// A child process running exactly_spool_child.
class Child : public ChildProcess {
 public:
  explicit Child(const std::vector<std::string>& args)
      : ChildProcess(EXACTLY_SPOOL_CHILD, args) {}
  void Kill() { Signal(SIGKILL); }
};

std::vector<int> ReadAcks(const std::string& path) {
  std::vector<int> out;
  std::ifstream in(path);
  int i;
  while (in >> i) out.push_back(i);
  return out;
}

class SpoolCrashTest : public SpoolTest {
 protected:
  void SetUp() override {
    // A broker with a data dir, so that it can restart as after a crash.
    cluster_ =
        TestCluster::Start({.default_partitions = 3, .persistent = true});
    ASSERT_NE(cluster_, nullptr) << "could not start a test cluster";
  }

  struct Run {
    int kills = 0;
    std::vector<int> acks;
    std::vector<SpooledRecord> records;
  };

  // Runs the child `kills` times for a random while, killing it each time,
  // restarting the broker (crash) in the middle round; then lets a last
  // child finish and drain.
  // With `async` the child sends with SendAsync and acknowledges in the
  // completions.
  void KillRepeatedly(const std::string& txn_id, int records, int kills,
                      int partitions, Run& run, bool async = false) {
    const std::string topic = NewTopic("crash", partitions);
    const std::string dir = temp_.Sub("spool");
    const std::string acks = temp_.Sub("acks");
    // Paced while it is being killed, so that every round has work left;
    // the last run goes flat out.
    std::vector<std::string> args = {bootstrap(), dir,
                                     topic,       checkpoint_topic_,
                                     txn_id,      std::to_string(records),
                                     acks,        /*delay_us=*/"5000"};
    std::vector<std::string> last_args = args;
    last_args.back() = "0";
    if (async) {
      args.push_back("async");
      last_args.push_back("async");
    }
    broker::Faults* faults =
        cluster_->broker() != nullptr ? &cluster_->broker()->faults() : nullptr;
    if (faults != nullptr) {
      // Responses lost after the append: the client must retry a batch the
      // broker already has.
      faults->DropProduceResponses(-1, /*one_in=*/15, {.topic = topic});
      // Slow commits: many kills land while a commit is in flight.
      faults->AddLatency(30, {.api_key = api::kEndTxn});
    }

    const unsigned seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 random(seed);
    // Mostly long enough to send and commit; sometimes so short that the
    // child dies while it opens the spool or recovers.
    std::uniform_int_distribution<int> lifetime_ms(100, 1200);
    for (int round = 0; round < kills; ++round) {
      Child child(args);
      ASSERT_TRUE(child.started());
      const int ms =
          round % 5 == 4 ? lifetime_ms(random) / 10 : lifetime_ms(random);
      int killed_node = -1;
      if (round == kills / 2 && cluster_->broker() != nullptr) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms / 2));
        absl::Status restarted =
            cluster_->RestartBroker(broker::Broker::RestartMode::kCrash);
        ASSERT_TRUE(restarted.ok()) << restarted;
        std::this_thread::sleep_for(std::chrono::milliseconds(ms / 2));
      } else if (round == kills / 2 && cluster_->kafka() != nullptr) {
        // A real broker crash: the JVM that coordinates this transactional
        // id (or leads partition 0) is SIGKILLed while the child runs, and
        // started again once the child is killed.
        std::this_thread::sleep_for(std::chrono::milliseconds(ms / 2));
        absl::StatusOr<int> node =
            txn_id.empty() ? cluster_->kafka()->Leader(topic, 0)
                           : cluster_->kafka()->TransactionCoordinator(txn_id);
        ASSERT_TRUE(node.ok()) << node.status();
        ASSERT_TRUE(cluster_->kafka()->Signal(*node, SIGKILL).ok());
        killed_node = *node;
        std::printf("round %d: SIGKILLed Kafka node %d\n", round, *node);
        std::this_thread::sleep_for(std::chrono::milliseconds(ms / 2));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      }
      int status = 0;
      ASSERT_FALSE(child.Exited(&status))
          << "the child exited by itself in round " << round << " (status "
          << status << "): it must still have work when it is killed";
      child.Kill();
      status = child.Wait();
      ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
      ++run.kills;
      if (killed_node >= 0) {
        absl::Status restarted = cluster_->kafka()->Restart(killed_node);
        ASSERT_TRUE(restarted.ok()) << restarted;
      }
    }
    Child last(last_args);
    ASSERT_TRUE(last.started());
    const auto deadline = std::chrono::steady_clock::now() + 2 * kPatience;
    int status = 0;
    while (!last.Exited(&status)) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "the last child did not finish";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    if (faults != nullptr) faults->Clear();
    run.acks = ReadAcks(acks);
    run.records = ReadCommittedAssigned(bootstrap(), topic, partitions);
    int aborted = 0, committed = 0;  // markers: only the bundled broker's log
    for (int p = 0; p < partitions && cluster_->broker() != nullptr; ++p) {
      auto log = cluster_->broker()->ReadLog(topic, p);
      if (!log.ok()) continue;
      for (const broker::LoggedBatch& b : *log) {
        if (!b.control) continue;
        (b.commit_marker ? committed : aborted) += 1;
      }
    }
    std::printf(
        "%d kills, %zu acknowledgements, %zu records read; markers: "
        "%d commit, %d abort\n",
        run.kills, run.acks.size(), run.records.size(), committed, aborted);
  }
  // Every record 0..sent-1 once in Kafka; none acknowledged twice; each
  // key's records in the order they were sent.
  static void ExpectEveryRecordOnceInOrder(const Run& run, int sent) {
    // Every record once: those acknowledged, and those whose Send() a kill cut
    // short but which made it to disk (the cursor told the next process so).
    EXPECT_EQ(ValuesOf(run.records), Expected(0, sent - 1));
    // No record was acknowledged twice: a restarted process never sent again
    // what the spool already held.
    std::set<int> acked(run.acks.begin(), run.acks.end());
    EXPECT_EQ(acked.size(), run.acks.size()) << "a record was sent twice";
    for (int i : acked) {
      EXPECT_EQ(ValuesOf(run.records).count(Value(i)), 1u) << i;
    }
    // In order per partition: each key's records (a key maps to one
    // partition) in the order they were sent.
    std::map<std::string, std::vector<std::string>> by_key;
    std::map<std::string, std::set<int32_t>> partitions_of;
    for (const SpooledRecord& r : run.records) {
      by_key[r.key].push_back(r.value);
      partitions_of[r.key].insert(r.partition);
    }
    EXPECT_EQ(by_key.size(), 8u);
    for (const auto& [key, values] : by_key) {
      EXPECT_EQ(partitions_of[key].size(), 1u) << key;
      EXPECT_TRUE(std::is_sorted(values.begin(), values.end()))
          << "key " << key << " is out of order";
    }
  }
};

TEST_F(SpoolCrashTest,
       KilledAtRandomMomentsEveryAcknowledgedRecordArrivesOnce) {
  // Paced at 5 ms a record, 22 rounds of at most 1.2 s cannot send them all:
  // every kill lands while the child still has work.
  constexpr int kRecords = 8000;
  constexpr int kPartitions = 4;
  Run run;
  KillRepeatedly(TestCluster::UniqueName("crash-txn"), kRecords, /*kills=*/22,
                 kPartitions, run);
  if (HasFatalFailure()) return;
  EXPECT_EQ(run.kills, 22);
  ExpectEveryRecordOnceInOrder(run, kRecords);
}

// The same with SendAsync: several calls are on their way to the disk when
// a kill lands; those whose completion said OK are in Kafka exactly once,
// and the next process resumes after the last one the spool holds.
TEST_F(SpoolCrashTest,
       KilledAtRandomMomentsWithSendAsyncEveryAcknowledgedRecordArrivesOnce) {
  constexpr int kRecords = 4000;
  constexpr int kPartitions = 4;
  Run run;
  KillRepeatedly(TestCluster::UniqueName("crash-async"), kRecords,
                 /*kills=*/10, kPartitions, run, /*async=*/true);
  if (HasFatalFailure()) return;
  EXPECT_EQ(run.kills, 10);
  ExpectEveryRecordOnceInOrder(run, kRecords);
}

// Without a transactional.id the spool is at least once: after a kill,
// records sent but not yet acknowledged go out again. Their headers (spool
// id, sequence) identify the copies: deduplicated by them, the output is
// every record once.
TEST_F(SpoolCrashTest,
       AtLeastOnceKilledRepeatedlyDuplicatesCarryTheSameHeaders) {
  // 8 rounds of at most 1.2 s at 5 ms a record: work is left for every kill.
  constexpr int kRecords = 4000;
  Run run;
  KillRepeatedly("", kRecords, /*kills=*/8, /*partitions=*/2, run);
  if (HasFatalFailure()) return;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> copies;
  for (const SpooledRecord& r : run.records) {
    ASSERT_EQ(r.headers.count("exactly.spool.id"), 1u);
    ASSERT_EQ(r.headers.count("exactly.spool.seq"), 1u);
    copies[{r.headers.at("exactly.spool.id"),
            r.headers.at("exactly.spool.seq")}]
        .insert(r.value);
  }
  std::multiset<std::string> deduplicated;
  for (const auto& [id, values] : copies) {
    EXPECT_EQ(values.size(), 1u) << "one (spool, sequence), two records";
    deduplicated.insert(values.begin(), values.end());
  }
  EXPECT_EQ(deduplicated, Expected(0, kRecords - 1));
  std::printf("at least once: %zu records read, %zu after deduplication\n",
              run.records.size(), deduplicated.size());
}

}  // namespace
}  // namespace exactly::testing
