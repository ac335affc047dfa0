// The fault schedule on a cluster of bundled brokers (exactly/broker/
// cluster.h): a thread that, at random moments drawn from a seed, kills a
// broker as SIGKILL would and restarts it later:
//
//   kKillGroupCoordinator  the broker that coordinates `group` now (as a
//                          running broker's FindCoordinator names it), once
//                          the workload has committed some output; it is
//                          restarted only once the workload has made progress
//                          without it (its committed output grew by more than
//                          what was already in flight), or after
//                          `progress_bound`, which is an error: the group's
//                          coordinator did not fail over
//   kKillPartitionLeader   the leader of a random partition of `topics`,
//                          down for a while
//   kKillRandomBroker      any broker, down for a while
//
// One broker is down at a time; after each restart the schedule waits until
// every partition of `topics` has all its replicas in sync again (so that
// the next kill leaves min.insync.replicas = 2 in sync), within a bound.
#ifndef EXACTLY_TESTS_EOS_CLUSTER_NEMESIS_H_
#define EXACTLY_TESTS_EOS_CLUSTER_NEMESIS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exactly/broker/cluster.h"

namespace exactly::eos {

enum class ClusterFault {
  kKillGroupCoordinator,
  kKillPartitionLeader,
  kKillRandomBroker,
};

std::string ClusterFaultName(ClusterFault fault);

struct ClusterNemesisOptions {
  uint64_t seed = 1;
  std::set<ClusterFault> faults;
  // kKillGroupCoordinator: the group, and how the workload's progress is
  // measured (CommittedRecords below, usually): a count that only grows.
  std::string group;
  std::function<int64_t()> progress;
  // Progress that does not need the killed coordinator: records of
  // transactions that had already committed their offsets when it died.
  int64_t in_flight_allowance = 0;
  // No kill once progress() is within in_flight_allowance of what this
  // returns (the workload is about to run out of work); null or -1: no end.
  std::function<int64_t()> progress_target;
  // How long the group may go without progress while its coordinator's
  // broker is down: past it the nemesis reports an error and stops.
  std::chrono::milliseconds progress_bound{30000};
  // kKillPartitionLeader: the partitions whose leaders are killed; also the
  // partitions that must be fully in sync again after a restart.
  std::vector<std::string> topics;
  int32_t partitions = 3;
  // Quiet time between two faults, drawn uniformly.
  std::chrono::milliseconds min_gap{500};
  std::chrono::milliseconds max_gap{1500};
  // How long a leader or random broker stays down, drawn uniformly.
  std::chrono::milliseconds min_down{300};
  std::chrono::milliseconds max_down{2500};
  // Bound on the wait for every replica to be back in sync after a restart.
  std::chrono::milliseconds resync_bound{30000};
};

class ClusterNemesis {
 public:
  ClusterNemesis(broker::Cluster* cluster, ClusterNemesisOptions options);
  ~ClusterNemesis();  // Stop()
  ClusterNemesis(const ClusterNemesis&) = delete;
  ClusterNemesis& operator=(const ClusterNemesis&) = delete;

  void Start();
  // Stops injecting and restarts a broker still down.
  void Stop();

  // What it did, in order (also logged to stderr as it happens).
  std::vector<std::string> log() const;
  // What makes the run fail: no progress without the group's coordinator,
  // a restart that failed, replicas that never caught up.
  std::vector<std::string> errors() const;
  // Faults injected, by kind; group coordinator kills after which the
  // group made progress while the broker was down.
  int64_t injected(ClusterFault fault) const;
  int64_t progressed_without_coordinator() const;

 private:
  void Run();
  void Inject(ClusterFault fault);
  void KillGroupCoordinator();
  // Kills `node`, keeps it down for a random while, restarts it.
  void KillFor(ClusterFault fault, int32_t node, const std::string& why);
  void RestartAndResync(int32_t node);
  void Note(std::string what);
  void Error(std::string what);
  // Sleeps up to `d`; false if stopping.
  bool Pause(std::chrono::milliseconds d);
  bool stopping() const;

  broker::Cluster* const cluster_;
  const ClusterNemesisOptions options_;
  std::vector<ClusterFault> choices_;
  std::mt19937_64 rng_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int32_t down_ = -1;  // the broker killed and not yet restarted
  std::vector<std::string> log_;
  std::vector<std::string> errors_;
  std::map<ClusterFault, int64_t> injected_;
  int64_t progressed_ = 0;
  std::thread thread_;
};

// The records of `topics` in committed transactions, as the partitions'
// current leaders hold them below their high watermarks (data batches whose
// producer later wrote a COMMIT marker there; non-transactional batches
// count too). Read in process, from the logs: it needs no coordinator.
int64_t CommittedRecords(broker::Cluster& cluster,
                         const std::vector<std::string>& topics,
                         int32_t partitions);

}  // namespace exactly::eos

#endif  // EXACTLY_TESTS_EOS_CLUSTER_NEMESIS_H_
