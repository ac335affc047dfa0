// The controller's decisions on disk, so that a cluster restarted from its
// data dirs comes back with the same replicas, leaders, epochs and ISRs, and
// never hands out a producer id twice (Kafka keeps the same facts in its
// __cluster_metadata log; a test cluster needs only the latest snapshot).
//
// One file, `controller.state` in the controller's folder, replaced whole on
// each change: written beside it, fsynced, renamed over it, and the folder
// fsynced, so a crash at any moment leaves the old snapshot or the new one.
// A CRC-32C over the contents turns a damaged file into a clear DataLoss
// error instead of a wrong cluster.
#ifndef EXACTLY_BROKER_CONTROLLER_CONTROLLER_STATE_FILE_H_
#define EXACTLY_BROKER_CONTROLLER_CONTROLLER_STATE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controller/cluster_metadata.h"

namespace exactly::broker {

struct ControllerState {
  ClusterMetadata metadata;
  // The first producer id of the next block the controller hands out.
  int64_t next_producer_id = 1;
};

// The file's bytes for `state`, and back. Decode never reads past `bytes` and
// answers DataLoss for anything it did not write.
std::string EncodeControllerState(const ClusterMetadata& metadata,
                                  int64_t next_producer_id);
absl::StatusOr<ControllerState> DecodeControllerState(std::string_view bytes);

// Replaces `dir`/controller.state with `state`, durably (creating `dir`).
absl::Status SaveControllerState(const std::string& dir,
                                 const ClusterMetadata& metadata,
                                 int64_t next_producer_id);
// The snapshot in `dir`; NotFound when there is none yet (a new cluster).
absl::StatusOr<ControllerState> LoadControllerState(const std::string& dir);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CONTROLLER_CONTROLLER_STATE_FILE_H_
