// The fault schedule: a thread that, at random moments drawn from a seed,
// makes the bundled broker misbehave in one of the ways real clusters do
// (exactly/broker/faults.h): responses dropped after the append, retriable
// and abortable errors on the transactional APIs, closed connections,
// latency, the broker down for a while, crash and power-loss restarts, a
// transaction held between PrepareCommit and its markers until a restart.
#ifndef EXACTLY_TESTS_EOS_NEMESIS_H_
#define EXACTLY_TESTS_EOS_NEMESIS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exactly/broker/broker.h"

namespace exactly::eos {

enum class Fault {
  kDropResponses,        // Produce appended, its response dropped
  kProduceErrors,        // retriable or abortable errors on Produce
  kAddPartitionsErrors,  // ... on AddPartitionsToTxn
  kAddOffsetsErrors,     // ... on AddOffsetsToTxn
  kEndTxnErrors,         // retriable errors on EndTxn
  kTxnOffsetCommitErrors,
  kFindCoordinatorErrors,
  kCloseConnections,
  kLatency,           // responses late for a while
  kBrokerDown,        // connections refused for a while
  kCrashRestart,      // needs a broker with a data dir
  kPowerLossRestart,  // needs a data dir; loses what was not fsynced
  kHoldMarkers,       // a transaction stops before its markers; restart
};

// Every fault. The restarts need a persistent broker.
std::set<Fault> AllFaults();
// The faults that need no data dir.
std::set<Fault> InMemoryFaults();
std::string FaultName(Fault fault);

struct NemesisOptions {
  uint64_t seed = 1;
  std::set<Fault> faults = InMemoryFaults();
  // Quiet time between two faults, drawn uniformly.
  std::chrono::milliseconds min_gap{20};
  std::chrono::milliseconds max_gap{250};
  // How long an armed fault stays armed (unless used up before): the broker's
  // pending faults are cleared after it, standing ones included.
  std::chrono::milliseconds min_episode{50};
  std::chrono::milliseconds max_episode{400};
};

class Nemesis {
 public:
  Nemesis(broker::Broker* broker, NemesisOptions options);
  ~Nemesis();  // Stop()
  Nemesis(const Nemesis&) = delete;
  Nemesis& operator=(const Nemesis&) = delete;

  void Start();
  // Stops injecting, removes every pending fault and ends a fault that is
  // still under way (a broker held down or holding markers is restarted).
  void Stop();

  // What it did, in order (also logged to stderr as it happens).
  std::vector<std::string> log() const;
  // Broker restarts that failed (they would make the run meaningless).
  std::vector<std::string> errors() const;

 private:
  void Run();
  void Inject(Fault fault);
  void Note(std::string what);
  // Sleeps up to `d`; false if stopping.
  bool Pause(std::chrono::milliseconds d);

  broker::Broker* const broker_;
  const NemesisOptions options_;
  std::vector<Fault> choices_;
  std::mt19937_64 rng_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::string> log_;
  std::vector<std::string> errors_;
  std::thread thread_;
};

}  // namespace exactly::eos

#endif  // EXACTLY_TESTS_EOS_NEMESIS_H_
