// One member of a consumer group, as the coordinator knows it (Kafka's
// MemberMetadata): its ids, timeouts, the protocols it supports with their
// metadata, its assignment, and the JoinGroup/SyncGroup answers it waits for.
#ifndef EXACTLY_BROKER_GROUP_MEMBER_H_
#define EXACTLY_BROKER_GROUP_MEMBER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "group/clock.h"
#include "protocol/error_code.h"

namespace exactly::broker {

struct MemberProtocol {
  std::string name;      // e.g. "range"
  std::string metadata;  // opaque to the coordinator (the subscription)
  bool operator==(const MemberProtocol&) const = default;
};

// What a JoinGroup gets back.
struct JoinResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::string member_id;
  int32_t generation_id = -1;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader;
  bool skip_assignment = false;
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::string metadata;
  };
  std::vector<Member> members;  // for the leader only

  static JoinResult Error(protocol::ErrorCode error, std::string member_id) {
    JoinResult r;
    r.error = error;
    r.member_id = std::move(member_id);
    return r;
  }
};

// What a SyncGroup gets back.
struct SyncResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string assignment;

  static SyncResult Error(protocol::ErrorCode error) {
    SyncResult r;
    r.error = error;
    return r;
  }
};

using JoinCallback = absl::AnyInvocable<void(JoinResult)>;
using SyncCallback = absl::AnyInvocable<void(SyncResult)>;

struct Member {
  std::string id;
  std::optional<std::string> instance_id;  // static membership (KIP-345)
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = 0;
  int32_t session_timeout_ms = 0;
  std::string protocol_type;
  std::vector<MemberProtocol> protocols;  // in the member's preference order
  std::string assignment;

  JoinCallback awaiting_join;  // set while its JoinGroup is parked
  SyncCallback awaiting_sync;  // set while its SyncGroup is parked
  // Joined in the rebalance under way and not yet part of a generation.
  bool is_new = false;
  // Expires the member when no heartbeat (or join) arrives in time.
  std::unique_ptr<Timer> heartbeat_timer;

  bool is_awaiting_join() const { return static_cast<bool>(awaiting_join); }
  bool is_awaiting_sync() const { return static_cast<bool>(awaiting_sync); }
  bool is_static() const { return instance_id.has_value(); }

  // The member's metadata for `protocol`; empty when it does not support it.
  const std::string& Metadata(const std::string& protocol) const;
  // The first of the member's protocols that is also in `candidates`.
  std::string Vote(const std::set<std::string>& candidates) const;
  // Same protocols, metadata and order: a rejoin that changes nothing.
  bool Matches(const std::vector<MemberProtocol>& protocols) const {
    return this->protocols == protocols;
  }
};

// The topics of a consumer-protocol subscription (the metadata "consumer"
// groups send: version, topics, user data). Nullopt when it does not parse.
std::optional<std::set<std::string>> ParseConsumerSubscription(
    const std::string& metadata);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_GROUP_MEMBER_H_
