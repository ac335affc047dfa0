#include "controller/replica_placement.h"

#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace exactly::broker {
namespace {

using protocol::ErrorCode;

// A stable hash (FNV-1a), so a placement does not change between runs or
// standard libraries.
uint32_t StableHash(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

std::vector<ReplicaList> PlaceReplicas(std::string_view topic,
                                       const std::vector<int32_t>& brokers,
                                       int32_t first_partition, int32_t count,
                                       int32_t replication_factor) {
  const uint32_t n = static_cast<uint32_t>(brokers.size());
  const uint32_t hash = StableHash(topic);
  // Kafka keeps the shift below n - 1 so a follower never lands on the first
  // replica's broker.
  return PlaceReplicasAt(
      brokers, first_partition, count, replication_factor,
      static_cast<int32_t>(hash % n),
      n > 1 ? static_cast<int32_t>((hash / 7) % (n - 1)) : 0);
}

std::vector<ReplicaList> PlaceReplicasAt(const std::vector<int32_t>& brokers,
                                         int32_t first_partition, int32_t count,
                                         int32_t replication_factor,
                                         int32_t start, int32_t initial_shift) {
  const int32_t n = static_cast<int32_t>(brokers.size());
  // The shift grows every n partitions counted from partition 0, so growing a
  // topic continues the pattern its first partitions started.
  int32_t shift = initial_shift + first_partition / n;
  std::vector<ReplicaList> out;
  out.reserve(static_cast<size_t>(count));
  for (int32_t p = first_partition; p < first_partition + count; ++p) {
    if (p > first_partition && p % n == 0) ++shift;
    const int32_t first = (start + p) % n;
    ReplicaList replicas{brokers[static_cast<size_t>(first)]};
    for (int32_t j = 0; j < replication_factor - 1; ++j) {
      const int32_t index = (first + 1 + (shift + j) % (n - 1)) % n;
      replicas.push_back(brokers[static_cast<size_t>(index)]);
    }
    out.push_back(std::move(replicas));
  }
  return out;
}

ApiError CheckReplicationFactor(int32_t replication_factor,
                                int32_t live_brokers) {
  if (replication_factor <= 0)
    return Error(ErrorCode::kInvalidReplicationFactor,
                 "Replication factor must be larger than 0.");
  if (replication_factor > live_brokers)
    return Error(
        ErrorCode::kInvalidReplicationFactor,
        absl::StrCat("Replication factor: ", replication_factor,
                     " larger than available brokers: ", live_brokers, "."));
  return {};
}

ApiError CheckAssignments(const std::vector<ReplicaList>& assignments,
                          const std::vector<int32_t>& brokers) {
  if (assignments.empty()) return {};
  const size_t rf = assignments.front().size();
  for (size_t p = 0; p < assignments.size(); ++p) {
    const ReplicaList& replicas = assignments[p];
    if (replicas.empty())
      return Error(ErrorCode::kInvalidReplicaAssignment,
                   absl::StrCat("Partition ", p, " has no replicas."));
    if (replicas.size() != rf)
      return Error(ErrorCode::kInvalidReplicaAssignment,
                   "All partitions should have the same number of replicas");
    if (std::set<int32_t>(replicas.begin(), replicas.end()).size() !=
        replicas.size())
      return Error(ErrorCode::kInvalidReplicaAssignment,
                   absl::StrCat("Duplicate replica assignment found: ",
                                absl::StrJoin(replicas, ",")));
    for (int32_t id : replicas) {
      if (std::find(brokers.begin(), brokers.end(), id) == brokers.end())
        return Error(
            ErrorCode::kInvalidReplicaAssignment,
            absl::StrCat("Unknown broker ", id,
                         " in replica assignment of partition ", p, "."));
    }
  }
  return {};
}

}  // namespace exactly::broker
