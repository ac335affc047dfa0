// The processor killed with SIGKILL at random points, again and again, and
// restarted: the committed output is exactly f(input), every input once, none
// twice.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sdk_test_util.h"
#include "support/child_process.h"

namespace exactly::testing {
namespace {

// A child process running exactly_processor_child.
class Child : public ChildProcess {
 public:
  explicit Child(const std::vector<std::string>& args)
      : ChildProcess(EXACTLY_PROCESSOR_CHILD, args) {}
  void Kill() { Signal(SIGKILL); }
};

class ProcessorKillTest : public SdkTest {};

TEST_F(ProcessorKillTest, KilledAtRandomPointsTheOutputIsExactlyFOfInput) {
  SKIP_WITHOUT_TRANSACTIONS();
  constexpr int kPartitions = 4;
  constexpr int kInputs = 3000;
  constexpr int kKills = 12;
  const std::string input = NewTopic("kill-in", kPartitions);
  const std::string output = NewTopic("kill-out", kPartitions);
  const std::string group = TestCluster::UniqueName("kill-group");
  const std::string txn_id = TestCluster::UniqueName("kill-txn");
  std::vector<std::pair<std::string, std::string>> kvs;
  std::multiset<std::string> expected;
  for (int i = 0; i < kInputs; ++i) {
    kvs.emplace_back("k" + std::to_string(i), "v" + std::to_string(i));
    expected.insert("f(v" + std::to_string(i) + ")");
  }
  Produce(input, kvs);
  // 3 ms a record: about 9 s of work, spread over many lifetimes.
  const std::vector<std::string> args = {bootstrap(), input,  output,
                                         group,       txn_id, "3000"};

  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  // Often long enough for a restarted child to rejoin the group (the dead
  // one's session, 6 s, must time out first) and be killed mid-batch;
  // sometimes it dies before, during init or the join.
  std::uniform_int_distribution<int> lifetime_ms(500, 12000);
  for (int round = 0; round < kKills; ++round) {
    Child child(args);
    ASSERT_TRUE(child.started());
    std::this_thread::sleep_for(std::chrono::milliseconds(lifetime_ms(random)));
    int status = 0;
    ASSERT_FALSE(child.Exited(&status))
        << "the processor exited by itself in round " << round
        << " with status " << status;
    child.Signal(SIGKILL);
    status = child.Wait();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }

  // The last one runs until the output is complete, then stops cleanly.
  Child last(args);
  ASSERT_TRUE(last.started());
  const size_t seen =
      AwaitDistinctValues(output, kInputs, 2 * kPatience, [&last] {
        int status = 0;
        ASSERT_FALSE(last.Exited(&status))
            << "the last processor exited by itself with status " << status;
      });
  ASSERT_EQ(seen, static_cast<size_t>(kInputs)) << "output incomplete";
  last.Signal(SIGTERM);
  const int status = last.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  EXPECT_TRUE(
      SameRecords(Values(ReadCommitted(output, kPartitions)), expected));
}

}  // namespace
}  // namespace exactly::testing
