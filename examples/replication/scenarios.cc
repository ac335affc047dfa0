#include "examples/replication/scenarios.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "exactly/broker/cluster.h"

namespace exactly::examples {
namespace {

using broker::Broker;
using broker::Cluster;
using broker::ClusterOptions;

constexpr char kTopic[] = "scenario";

// A data dir for the run's brokers, removed with it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "exactly-scenario-XXXXXX")
            .string();
    if (const char* made = mkdtemp(pattern.data())) path_ = made;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

template <class Pred>
bool WaitFor(Pred done, int seconds = 30) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A fresh cluster of three with one single-partition topic.
struct Setup {
  ScratchDir dir;
  std::unique_ptr<Cluster> cluster;
  std::string error;

  Setup(const ScenarioOptions& o,
        const std::map<std::string, std::string>& topic_configs,
        int32_t replica_lag_time_max_ms = 30000) {
    ClusterOptions options{.brokers = 3};
    options.broker.data_dir = dir.path();
    options.broker.verbose = o.verbose;
    options.broker.replica_lag_time_max_ms = replica_lag_time_max_ms;
    auto started = Cluster::Start(options);
    if (!started.ok()) {
      error = std::string(started.status().message());
      return;
    }
    cluster = std::move(*started);
    if (absl::Status s = cluster->CreateTopic(kTopic, 1, 3, topic_configs);
        !s.ok())
      error = std::string(s.message());
  }

  int32_t leader() const {
    auto p = cluster->DescribePartition(kTopic, 0);
    return p.ok() ? p->leader : -1;
  }
  size_t isr_size() const {
    auto p = cluster->DescribePartition(kTopic, 0);
    return p.ok() ? p->isr.size() : 0;
  }
  int64_t log_end_on(int32_t id) {
    auto o = cluster->broker(id).Offsets(kTopic, 0);
    return o.ok() ? o->log_end_offset : -1;
  }
  // Every replica in the ISR and at the same log end, and the leader's high
  // watermark there: what a consumer may read is all there is.
  bool FullyReplicated() {
    const int32_t lead = leader();
    if (isr_size() != 3 || lead < 1) return false;
    auto o = cluster->broker(lead).Offsets(kTopic, 0);
    if (!o.ok() || o->high_watermark != o->log_end_offset) return false;
    const int64_t end = o->log_end_offset;
    return log_end_on(1) == end && log_end_on(2) == end && log_end_on(3) == end;
  }
  void SetFollowersPaused(bool paused) {
    const int32_t lead = leader();
    for (int32_t id = 1; id <= 3; ++id) {
      if (id == lead) continue;
      if (paused)
        cluster->broker(id).faults().PauseReplication();
      else
        cluster->broker(id).faults().ResumeReplication();
    }
  }
  // Pauses the followers and writes one record (acks=1, not counted) so that
  // they fall behind: a follower stays in sync while it has everything the
  // leader has, fetching or not, as in Kafka.
  bool ShrinkIsrToLeader() {
    SetFollowersPaused(true);
    {
      LedgerProducer probe(cluster->bootstrap_servers(), "1");
      probe.Send(kTopic, "probe");
      probe.Flush();
    }
    return WaitFor([&] { return isr_size() == 1; });
  }
  void SendAll(LedgerProducer& p, const std::string& prefix, int n) {
    for (int i = 0; i < n; ++i) p.Send(kTopic, absl::StrCat(prefix, "-", i));
  }
  Counts Read(const LedgerProducer& p) {
    return Tally(p.acknowledged(), p.refused(),
                 ReadPartition(cluster->bootstrap_servers(), kTopic));
  }
};

ScenarioRun Failed(ScenarioRun run, std::string why) {
  run.error = std::move(why);
  return run;
}

}  // namespace

ScenarioRun AcksOneLeaderDies(const ScenarioOptions& o) {
  ScenarioRun run{"1. acks=1, RF=3, leader dies unreplicated",
                  "followers paused, in-sync follower elected"};
  Setup s(o, {});
  if (!s.error.empty()) return Failed(run, s.error);
  LedgerProducer producer(s.cluster->bootstrap_servers(), "1");
  s.SendAll(producer, "replicated", o.records);
  producer.Flush();
  if (!WaitFor([&] { return s.FullyReplicated(); }))
    return Failed(run, "the followers never caught up");
  s.SetFollowersPaused(true);
  s.SendAll(producer, "leader-only", o.records);
  producer.Flush();
  const int32_t old_leader = s.leader();
  (void)s.cluster->broker(old_leader).Stop();
  s.SetFollowersPaused(false);
  if (!WaitFor([&] { return s.leader() > 0; }))
    return Failed(run, "no new leader");
  // Back as a follower, the old leader drops what only it had (KIP-101).
  (void)s.cluster->broker(old_leader).Restart(Broker::RestartMode::kClean);
  WaitFor([&] { return s.FullyReplicated(); });
  run.counts = s.Read(producer);
  return run;
}

ScenarioRun AcksAllLeaderKills(const ScenarioOptions& o) {
  ScenarioRun run{
      "2. acks=all, RF=3, min.insync.replicas=2, idempotent",
      absl::StrCat("same schedule, then ", o.leader_kills, " leader kills")};
  Setup s(o, {{"min.insync.replicas", "2"}});
  if (!s.error.empty()) return Failed(run, s.error);
  LedgerProducer producer(s.cluster->bootstrap_servers(), "all", 120000);
  // The first schedule: acks=all waits for the paused followers, so nothing
  // is acknowledged before the leader dies; the producer retries it on the
  // new leader.
  s.SetFollowersPaused(true);
  s.SendAll(producer, "paused", o.records);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int32_t old_leader = s.leader();
  (void)s.cluster->broker(old_leader).Restart(Broker::RestartMode::kCrash);
  s.SetFollowersPaused(false);
  producer.Flush();

  // Then kills of whoever leads, while records keep coming.
  std::atomic<bool> sending{true};
  std::thread sender([&] {
    for (int i = 0; sending.load(); ++i) {
      producer.Send(kTopic, absl::StrCat("killed-", i));
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  });
  std::mt19937 random(19);
  for (int kill = 0; kill < o.leader_kills; ++kill) {
    // Two replicas in sync, so that acks=all can be answered at all.
    WaitFor([&] { return s.isr_size() >= 2 && s.leader() > 0; });
    std::this_thread::sleep_for(std::chrono::milliseconds(
        std::uniform_int_distribution<>(0, 60)(random)));
    old_leader = s.leader();
    if (old_leader > 0)
      (void)s.cluster->broker(old_leader).Restart(Broker::RestartMode::kCrash);
  }
  sending = false;
  sender.join();
  producer.Flush(120000);
  WaitFor([&] { return s.FullyReplicated(); });
  run.counts = s.Read(producer);
  return run;
}

ScenarioRun IsrShrunkToLeader(const ScenarioOptions& o, int min_insync) {
  ScenarioRun run{"3. acks=all, ISR shrunk to the leader, leader loses power",
                  absl::StrCat("min.insync.replicas=", min_insync)};
  // Followers leave the ISR 300 ms after they stop fetching.
  Setup s(o, {{"min.insync.replicas", std::to_string(min_insync)}}, 300);
  if (!s.error.empty()) return Failed(run, s.error);
  if (!s.ShrinkIsrToLeader()) return Failed(run, "the ISR never shrank");
  {
    LedgerProducer producer(s.cluster->bootstrap_servers(), "all", 3000);
    s.SendAll(producer, "isr-of-one", o.records);
    producer.Flush();
    const int32_t leader = s.leader();
    // The page cache goes (flush never): the last in-sync replica comes back
    // without what it had not synced, and leads again, cleanly.
    (void)s.cluster->broker(leader).Restart(Broker::RestartMode::kPowerLoss);
    s.SetFollowersPaused(false);
    if (!WaitFor([&] { return s.leader() > 0; }))
      return Failed(run, "no leader after the power loss");
    WaitFor([&] { return s.FullyReplicated(); });
    run.counts = s.Read(producer);
  }
  return run;
}

ScenarioRun UncleanElection(const ScenarioOptions& o, bool unclean) {
  ScenarioRun run{"4. leader dies with the ISR shrunk to it",
                  unclean ? "unclean.leader.election.enable=true"
                          : "unclean.leader.election.enable=false"};
  Setup s(o,
          {{"min.insync.replicas", "1"},
           {"unclean.leader.election.enable", unclean ? "true" : "false"}},
          300);
  if (!s.error.empty()) return Failed(run, s.error);
  if (!s.ShrinkIsrToLeader()) return Failed(run, "the ISR never shrank");
  LedgerProducer producer(s.cluster->bootstrap_servers(), "all", 30000);
  s.SendAll(producer, "leader-only", o.records);
  producer.Flush();
  const int32_t old_leader = s.leader();
  (void)s.cluster->broker(old_leader).Stop();
  s.SetFollowersPaused(false);
  if (unclean) {
    if (!WaitFor([&] { return s.leader() > 0; }))
      return Failed(run, "no unclean election");
  } else {
    // The partition waits for its last in-sync replica.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (s.leader() != -1) return Failed(run, "an out-of-sync replica led");
  }
  (void)s.cluster->broker(old_leader).Restart(Broker::RestartMode::kClean);
  if (!WaitFor([&] { return s.leader() > 0; }))
    return Failed(run, "no leader after the old one returned");
  WaitFor([&] { return s.FullyReplicated(); });
  run.counts = s.Read(producer);
  return run;
}

ScenarioRun PowerLossSingleBroker(const ScenarioOptions& o) {
  ScenarioRun run{"5. power loss, flush never", "one broker"};
  ScratchDir dir;
  broker::BrokerOptions options;
  options.data_dir = dir.path();
  options.verbose = o.verbose;
  auto started = Broker::Start(options);
  if (!started.ok())
    return Failed(run, std::string(started.status().message()));
  Broker& b = **started;
  if (absl::Status st = b.CreateTopic(kTopic, 1); !st.ok())
    return Failed(run, std::string(st.message()));
  LedgerProducer producer(b.bootstrap_servers(), "all");
  for (int i = 0; i < o.records; ++i)
    producer.Send(kTopic, absl::StrCat("single-", i));
  producer.Flush();
  (void)b.Restart(Broker::RestartMode::kPowerLoss);
  run.counts = Tally(producer.acknowledged(), producer.refused(),
                     ReadPartition(b.bootstrap_servers(), kTopic));
  return run;
}

ScenarioRun PowerLossReplicated(const ScenarioOptions& o) {
  ScenarioRun run{"5. power loss, flush never",
                  "RF=3, acks=all, each broker in turn"};
  Setup s(o, {{"min.insync.replicas", "2"}});
  if (!s.error.empty()) return Failed(run, s.error);
  LedgerProducer producer(s.cluster->bootstrap_servers(), "all");
  s.SendAll(producer, "replicated", o.records);
  producer.Flush();
  for (int32_t id = 1; id <= 3; ++id) {
    if (!WaitFor([&] { return s.FullyReplicated(); }))
      return Failed(run, "a replica never caught up");
    (void)s.cluster->broker(id).Restart(Broker::RestartMode::kPowerLoss);
  }
  WaitFor([&] { return s.FullyReplicated(); });
  run.counts = s.Read(producer);
  return run;
}

}  // namespace exactly::examples
