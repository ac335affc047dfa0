// A follower's append: batches fetched from the leader go into the log as
// they are, at the offsets and with the leader epochs the leader gave them
// (no sequence check, no new offsets: the leader decided), and the producer
// states and the transaction index are rebuilt from them exactly as the leader
// built its own, so deduplication and the last stable offset survive a
// failover.
#ifndef EXACTLY_BROKER_REPLICATION_FOLLOWER_APPEND_H_
#define EXACTLY_BROKER_REPLICATION_FOLLOWER_APPEND_H_

#include <cstdint>
#include <string_view>

#include "cluster/api_error.h"
#include "cluster/broker_state.h"
#include "cluster/partition.h"

namespace exactly::broker {

struct FollowerAppendOutcome {
  ApiError error;
  int64_t records = 0;  // appended (batches this log already held are skipped)
};

// Appends the whole batches of `records` (a Fetch response's record set) that
// start at this log's end, and stages them for the store. Stops at a gap or a
// batch that fails its checks (CORRUPT_MESSAGE), keeping what came before.
FollowerAppendOutcome AppendAsFollower(BrokerState& b, Partition& partition,
                                       std::string_view records);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_FOLLOWER_APPEND_H_
