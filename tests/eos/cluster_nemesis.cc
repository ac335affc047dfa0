#include "eos/cluster_nemesis.h"

#include <stdio.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace exactly::eos {

using broker::Broker;
using broker::Cluster;
using broker::CoordinatorKey;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string ClusterFaultName(ClusterFault fault) {
  switch (fault) {
    case ClusterFault::kKillGroupCoordinator:
      return "kill the group coordinator";
    case ClusterFault::kKillPartitionLeader:
      return "kill a partition leader";
    case ClusterFault::kKillRandomBroker:
      return "kill a random broker";
  }
  return "?";
}

int64_t CommittedRecords(Cluster& cluster,
                         const std::vector<std::string>& topics,
                         int32_t partitions) {
  int64_t committed = 0;
  for (const std::string& topic : topics) {
    for (int32_t p = 0; p < partitions; ++p) {
      absl::StatusOr<broker::PartitionLeadership> leadership =
          cluster.DescribePartition(topic, p);
      if (!leadership.ok() || leadership->leader <= 0) continue;
      Broker& leader = cluster.broker(leadership->leader);
      if (!leader.running()) continue;
      absl::StatusOr<broker::PartitionOffsets> offsets =
          leader.Offsets(topic, p);
      absl::StatusOr<std::vector<broker::LoggedBatch>> log =
          leader.ReadLog(topic, p);
      if (!offsets.ok() || !log.ok()) continue;
      std::map<int64_t, int64_t> open;  // producer id -> records
      for (const broker::LoggedBatch& batch : *log) {
        if (batch.last_offset >= offsets->high_watermark) break;
        const auto n = static_cast<int64_t>(batch.records.size());
        if (!batch.transactional) {
          committed += n;
        } else if (!batch.control) {
          open[batch.producer_id] += n;
        } else {
          if (batch.commit_marker) committed += open[batch.producer_id];
          open.erase(batch.producer_id);
        }
      }
    }
  }
  return committed;
}

ClusterNemesis::ClusterNemesis(Cluster* cluster, ClusterNemesisOptions options)
    : cluster_(cluster),
      options_(std::move(options)),
      choices_(options_.faults.begin(), options_.faults.end()),
      rng_(options_.seed) {}

ClusterNemesis::~ClusterNemesis() { Stop(); }

void ClusterNemesis::Start() {
  if (choices_.empty() || thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void ClusterNemesis::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Run() restarts what it killed before it returns; this is for a kill it
  // could not undo.
  int32_t down;
  {
    std::lock_guard<std::mutex> lock(mu_);
    down = down_;
  }
  if (down > 0) RestartAndResync(down);
}

std::vector<std::string> ClusterNemesis::log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

std::vector<std::string> ClusterNemesis::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

int64_t ClusterNemesis::injected(ClusterFault fault) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = injected_.find(fault);
  return it == injected_.end() ? 0 : it->second;
}

int64_t ClusterNemesis::progressed_without_coordinator() const {
  std::lock_guard<std::mutex> lock(mu_);
  return progressed_;
}

void ClusterNemesis::Note(std::string what) {
  fprintf(stderr, "cluster nemesis: %s\n", what.c_str());
  std::lock_guard<std::mutex> lock(mu_);
  log_.push_back(std::move(what));
}

void ClusterNemesis::Error(std::string what) {
  Note(absl::StrCat("ERROR: ", what));
  std::lock_guard<std::mutex> lock(mu_);
  errors_.push_back(std::move(what));
  stopping_ = true;  // a broken run: no more faults
}

bool ClusterNemesis::Pause(milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return stopping_; });
}

bool ClusterNemesis::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void ClusterNemesis::Run() {
  std::uniform_int_distribution<int64_t> gap(options_.min_gap.count(),
                                             options_.max_gap.count());
  std::uniform_int_distribution<size_t> pick(0, choices_.size() - 1);
  while (Pause(milliseconds(gap(rng_)))) {
    Inject(choices_[pick(rng_)]);
  }
}

void ClusterNemesis::Inject(ClusterFault fault) {
  switch (fault) {
    case ClusterFault::kKillGroupCoordinator:
      KillGroupCoordinator();
      return;
    case ClusterFault::kKillPartitionLeader: {
      const std::string& topic =
          options_.topics[std::uniform_int_distribution<size_t>(
              0, options_.topics.size() - 1)(rng_)];
      const int32_t partition = std::uniform_int_distribution<int32_t>(
          0, options_.partitions - 1)(rng_);
      absl::StatusOr<broker::PartitionLeadership> leadership =
          cluster_->DescribePartition(topic, partition);
      if (!leadership.ok() || leadership->leader <= 0) {
        Note(absl::StrCat(
            topic, "-", partition, " has no leader: ",
            leadership.ok() ? "offline" : leadership.status().ToString()));
        return;
      }
      KillFor(fault, leadership->leader,
              absl::StrCat("the leader of ", topic, "-", partition));
      return;
    }
    case ClusterFault::kKillRandomBroker:
      KillFor(fault,
              std::uniform_int_distribution<int32_t>(1, cluster_->size())(rng_),
              "a random broker");
      return;
  }
}

void ClusterNemesis::KillGroupCoordinator() {
  const int64_t before = options_.progress();
  const int64_t target =
      options_.progress_target ? options_.progress_target() : -1;
  if (before == 0) {
    // Killed mid-stream, the next coordinator must take over the group's
    // committed and pending offsets: wait for the first commit.
    Note("no group coordinator kill before the first committed output");
    return;
  }
  if (target >= 0 && before + options_.in_flight_allowance >= target) {
    Note(absl::StrCat("no group coordinator kill: progress ", before,
                      " is within ", options_.in_flight_allowance, " of ",
                      target));
    return;
  }
  absl::StatusOr<int32_t> node =
      cluster_->KillCoordinator(CoordinatorKey::kGroup, options_.group);
  if (!node.ok()) {
    Note(absl::StrCat("no group coordinator to kill: ",
                      node.status().ToString()));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    down_ = *node;
    ++injected_[ClusterFault::kKillGroupCoordinator];
  }
  Note(absl::StrCat("killed broker ", *node, ", the coordinator of group ",
                    options_.group, ", at progress ", before,
                    "; it stays down until progress passes ",
                    before + options_.in_flight_allowance));
  // Committed output past what was in flight at the kill needs offsets
  // committed to a live coordinator of the group: another broker's.
  const auto killed_at = Clock::now();
  const auto deadline = killed_at + options_.progress_bound;
  int64_t now = before;
  bool progressed = false;
  while (Pause(milliseconds(50))) {
    now = options_.progress();
    if (now > before + options_.in_flight_allowance) {
      progressed = true;
      break;
    }
    if (target >= 0 && now >= target) {
      break;  // done before the allowance was passed: proves nothing
    }
    if (Clock::now() >= deadline) break;
  }
  const auto waited =
      std::chrono::duration_cast<milliseconds>(Clock::now() - killed_at);
  if (progressed) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++progressed_;
    }
    Note(absl::StrCat("progress ", before, " -> ", now, " in ", waited.count(),
                      " ms with group coordinator ", *node, " down"));
  } else if (Clock::now() >= deadline) {
    Error(absl::StrCat(
        "no progress for ", waited.count(), " ms after broker ", *node,
        ", the coordinator of group ", options_.group,
        ", was killed (committed output records stayed at ", now,
        ", killed at ", before, ", in flight allowance ",
        options_.in_flight_allowance,
        "): the group's coordinator did not fail over to another broker"));
  }
  RestartAndResync(*node);
}

void ClusterNemesis::KillFor(ClusterFault fault, int32_t node,
                             const std::string& why) {
  if (absl::Status s = cluster_->Kill(node); !s.ok()) {
    Error(absl::StrCat("kill ", node, ": ", s.ToString()));
    return;
  }
  const milliseconds down(std::uniform_int_distribution<int64_t>(
      options_.min_down.count(), options_.max_down.count())(rng_));
  {
    std::lock_guard<std::mutex> lock(mu_);
    down_ = node;
    ++injected_[fault];
  }
  Note(absl::StrCat("killed broker ", node, " (", why, ") for ", down.count(),
                    " ms"));
  Pause(down);
  RestartAndResync(node);
}

void ClusterNemesis::RestartAndResync(int32_t node) {
  if (absl::Status s = cluster_->Restart(node, Broker::RestartMode::kCrash);
      !s.ok()) {
    Error(absl::StrCat("restart ", node, ": ", s.ToString()));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    down_ = -1;
  }
  // Every replica back in sync before the next kill: with one broker down
  // and another out of the ISR, min.insync.replicas = 2 would stop writes.
  const auto start = Clock::now();
  const auto deadline = start + options_.resync_bound;
  std::string behind;
  do {
    behind.clear();
    for (const std::string& topic : options_.topics) {
      for (int32_t p = 0; p < options_.partitions; ++p) {
        absl::StatusOr<broker::PartitionLeadership> l =
            cluster_->DescribePartition(topic, p);
        if (!l.ok() || l->leader <= 0 || l->isr.size() < l->replicas.size()) {
          behind = absl::StrCat(topic, "-", p);
          break;
        }
      }
      if (!behind.empty()) break;
    }
    if (behind.empty()) break;
    std::this_thread::sleep_for(milliseconds(20));
  } while (Clock::now() < deadline);
  if (!behind.empty()) {
    Error(absl::StrCat("broker ", node, " restarted, but ", behind,
                       " was not back in sync within ",
                       options_.resync_bound.count(), " ms"));
    return;
  }
  Note(absl::StrCat(
      "restarted broker ", node, "; every replica in sync after ",
      std::chrono::duration_cast<milliseconds>(Clock::now() - start).count(),
      " ms"));
}

}  // namespace exactly::eos
