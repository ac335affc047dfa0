// The leader side of replication: what a follower's Fetch tells the leader
// (its log end), and what follows from it: the high watermark moves, and a
// follower that caught up rejoins the ISR (AlterPartition to the controller).
// Also the periodic check that drops followers lagging for longer than
// replica.lag.time.max.ms.
#ifndef EXACTLY_BROKER_REPLICATION_LEADER_SIDE_H_
#define EXACTLY_BROKER_REPLICATION_LEADER_SIDE_H_

#include <cstdint>

#include "cluster/broker_state.h"
#include "protocol/messages/fetch.h"

namespace exactly::broker {

// Records, for each partition this broker leads, the fetch offset of
// follower `request.replica_id`; moves high watermarks and wakes what waits
// on them; asks the controller to take caught-up followers back into the ISR.
void NoteFollowerFetch(BrokerState& b, const protocol::FetchRequest& request);

// Asks the controller to drop, from the ISR of every partition this broker
// leads, the followers that have not caught up within `lag_max_ms`.
void ShrinkIsrs(BrokerState& b, int64_t lag_max_ms);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_REPLICATION_LEADER_SIDE_H_
