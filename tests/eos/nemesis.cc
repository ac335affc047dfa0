#include "eos/nemesis.h"

#include <stdio.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace exactly::eos {
namespace {

using broker::Broker;

// Kafka API keys and error codes the schedule uses.
constexpr int16_t kProduce = 0;
constexpr int16_t kFindCoordinator = 10;
constexpr int16_t kAddPartitionsToTxn = 24;
constexpr int16_t kAddOffsetsToTxn = 25;
constexpr int16_t kEndTxn = 26;
constexpr int16_t kTxnOffsetCommit = 28;

constexpr int16_t kNotLeaderOrFollower = 6;
constexpr int16_t kRequestTimedOut = 7;
constexpr int16_t kCoordinatorLoadInProgress = 14;
constexpr int16_t kCoordinatorNotAvailable = 15;
constexpr int16_t kNotCoordinator = 16;
constexpr int16_t kNotEnoughReplicas = 19;
constexpr int16_t kTopicAuthorizationFailed = 29;
constexpr int16_t kGroupAuthorizationFailed = 30;
constexpr int16_t kConcurrentTransactions = 51;

// Retriable for librdkafka's transactional producer on every coordinator API
// (rdkafka_txnmgr.c): the call is made again.
constexpr int16_t kCoordinatorRetriable[] = {
    kCoordinatorLoadInProgress, kCoordinatorNotAvailable, kNotCoordinator,
    kConcurrentTransactions};

struct ErrorChoice {
  int16_t api;
  std::vector<int16_t> retriable;
  std::vector<int16_t> abortable;  // the transaction must be aborted
};

ErrorChoice ErrorsFor(Fault fault) {
  const std::vector<int16_t> coordinator(std::begin(kCoordinatorRetriable),
                                         std::end(kCoordinatorRetriable));
  switch (fault) {
    case Fault::kProduceErrors:
      return {kProduce,
              {kNotLeaderOrFollower, kRequestTimedOut, kNotEnoughReplicas},
              {kTopicAuthorizationFailed}};
    case Fault::kAddPartitionsErrors:
      return {kAddPartitionsToTxn, coordinator, {kTopicAuthorizationFailed}};
    case Fault::kAddOffsetsErrors:
      return {kAddOffsetsToTxn, coordinator, {kGroupAuthorizationFailed}};
    case Fault::kEndTxnErrors:
      return {kEndTxn, coordinator, {}};
    case Fault::kTxnOffsetCommitErrors:
      return {kTxnOffsetCommit, coordinator, {kGroupAuthorizationFailed}};
    case Fault::kFindCoordinatorErrors:
      return {kFindCoordinator, {kCoordinatorNotAvailable}, {}};
    default:
      return {};
  }
}

}  // namespace

std::set<Fault> AllFaults() {
  std::set<Fault> all = InMemoryFaults();
  all.insert(
      {Fault::kCrashRestart, Fault::kPowerLossRestart, Fault::kHoldMarkers});
  return all;
}

std::set<Fault> InMemoryFaults() {
  return {Fault::kDropResponses,
          Fault::kProduceErrors,
          Fault::kAddPartitionsErrors,
          Fault::kAddOffsetsErrors,
          Fault::kEndTxnErrors,
          Fault::kTxnOffsetCommitErrors,
          Fault::kFindCoordinatorErrors,
          Fault::kCloseConnections,
          Fault::kLatency,
          Fault::kBrokerDown};
}

std::string FaultName(Fault fault) {
  switch (fault) {
    case Fault::kDropResponses:
      return "drop-responses";
    case Fault::kProduceErrors:
      return "produce-errors";
    case Fault::kAddPartitionsErrors:
      return "add-partitions-errors";
    case Fault::kAddOffsetsErrors:
      return "add-offsets-errors";
    case Fault::kEndTxnErrors:
      return "end-txn-errors";
    case Fault::kTxnOffsetCommitErrors:
      return "txn-offset-commit-errors";
    case Fault::kFindCoordinatorErrors:
      return "find-coordinator-errors";
    case Fault::kCloseConnections:
      return "close-connections";
    case Fault::kLatency:
      return "latency";
    case Fault::kBrokerDown:
      return "broker-down";
    case Fault::kCrashRestart:
      return "crash-restart";
    case Fault::kPowerLossRestart:
      return "power-loss-restart";
    case Fault::kHoldMarkers:
      return "hold-markers";
  }
  return "?";
}

Nemesis::Nemesis(Broker* broker, NemesisOptions options)
    : broker_(broker), options_(std::move(options)), rng_(options_.seed) {
  for (Fault f : options_.faults) {
    // Cheap faults come up more often than restarts.
    const bool heavy = f == Fault::kCrashRestart ||
                       f == Fault::kPowerLossRestart ||
                       f == Fault::kHoldMarkers || f == Fault::kBrokerDown;
    for (int i = 0; i < (heavy ? 1 : 3); ++i) choices_.push_back(f);
  }
}

Nemesis::~Nemesis() { Stop(); }

void Nemesis::Start() {
  if (choices_.empty() || thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void Nemesis::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  broker_->faults().Clear();
  broker_->faults().AddLatency(0);
}

std::vector<std::string> Nemesis::log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

std::vector<std::string> Nemesis::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

void Nemesis::Note(std::string what) {
  fprintf(stderr, "nemesis: %s\n", what.c_str());
  std::lock_guard<std::mutex> lock(mu_);
  log_.push_back(std::move(what));
}

bool Nemesis::Pause(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return stopping_; });
}

void Nemesis::Run() {
  std::uniform_int_distribution<int64_t> gap(options_.min_gap.count(),
                                             options_.max_gap.count());
  std::uniform_int_distribution<size_t> pick(0, choices_.size() - 1);
  std::uniform_int_distribution<int64_t> episode(options_.min_episode.count(),
                                                 options_.max_episode.count());
  // One fault at a time, then a quiet gap: armed errors that nothing
  // consumes would otherwise pile up faster than a client's retries use
  // them, and no transaction would ever get through.
  while (Pause(std::chrono::milliseconds(gap(rng_)))) {
    Inject(choices_[pick(rng_)]);
    if (!Pause(std::chrono::milliseconds(episode(rng_)))) break;
    broker_->faults().Clear();
  }
}

void Nemesis::Inject(Fault fault) {
  broker::Faults& faults = broker_->faults();
  auto restart = [&](Broker::RestartMode mode, const char* how) {
    absl::Status s = broker_->Restart(mode);
    Note(absl::StrCat("restart (", how, "): ", s.ok() ? "done" : s.ToString()));
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      errors_.push_back(absl::StrCat("restart (", how, "): ", s.ToString()));
    }
  };
  switch (fault) {
    case Fault::kDropResponses: {
      const int count = std::uniform_int_distribution<int>(1, 3)(rng_);
      const int one_in = std::uniform_int_distribution<int>(1, 4)(rng_);
      faults.DropProduceResponses(count, one_in);
      Note(absl::StrCat("drop ", count, " produce responses, 1 in ", one_in));
      return;
    }
    case Fault::kProduceErrors:
    case Fault::kAddPartitionsErrors:
    case Fault::kAddOffsetsErrors:
    case Fault::kEndTxnErrors:
    case Fault::kTxnOffsetCommitErrors:
    case Fault::kFindCoordinatorErrors: {
      const ErrorChoice choice = ErrorsFor(fault);
      const bool abortable =
          !choice.abortable.empty() &&
          std::uniform_int_distribution<int>(0, 2)(rng_) == 0;
      const std::vector<int16_t>& codes =
          abortable ? choice.abortable : choice.retriable;
      const int16_t code = codes[std::uniform_int_distribution<size_t>(
          0, codes.size() - 1)(rng_)];
      const int count = std::uniform_int_distribution<int>(1, 2)(rng_);
      faults.FailRequests({.api_key = choice.api}, code, count);
      Note(absl::StrCat(FaultName(fault), ": error ", code, " on the next ",
                        count, abortable ? " (abortable)" : " (retriable)"));
      return;
    }
    case Fault::kCloseConnections:
      Note("close every connection");
      faults.CloseAllConnections();
      return;
    case Fault::kLatency: {
      const int ms = std::uniform_int_distribution<int>(5, 60)(rng_);
      Note(absl::StrCat("latency ", ms, " ms for a while"));
      faults.AddLatency(ms);
      Pause(std::chrono::milliseconds(
          std::uniform_int_distribution<int>(100, 500)(rng_)));
      faults.AddLatency(0);
      return;
    }
    case Fault::kBrokerDown: {
      const int ms = std::uniform_int_distribution<int>(100, 800)(rng_);
      Note(absl::StrCat("broker down for ", ms, " ms"));
      faults.BrokerDown(ms);
      Pause(std::chrono::milliseconds(ms));
      return;
    }
    case Fault::kCrashRestart:
      restart(Broker::RestartMode::kCrash, "crash");
      return;
    case Fault::kPowerLossRestart:
      restart(Broker::RestartMode::kPowerLoss, "power loss");
      return;
    case Fault::kHoldMarkers: {
      Note("hold the markers of the next transaction, then crash-restart");
      faults.HoldTransactionMarkers(1);
      Pause(std::chrono::milliseconds(
          std::uniform_int_distribution<int>(50, 400)(rng_)));
      // Disarmed if no transaction ended meanwhile; a held transaction stays
      // held until a restart finishes it.
      faults.HoldTransactionMarkers(0);
      restart(Broker::RestartMode::kCrash, "crash, releasing held markers");
      return;
    }
  }
}

}  // namespace exactly::eos
