// The fixture of the group state machine's unit tests: a group on a manual
// clock with a persistence that stores (or holds) records, and helpers for
// joins and syncs whose answers may come later.
#ifndef EXACTLY_TESTS_UNIT_GROUP_GROUP_FIXTURE_H_
#define EXACTLY_TESTS_UNIT_GROUP_GROUP_FIXTURE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "group/group.h"
#include "gtest/gtest.h"
#include "protocol/serde.h"
#include "unit/group/manual_clock.h"

namespace exactly::broker::testing {

using protocol::ErrorCode;

constexpr int32_t kSessionMs = 10000;
constexpr int32_t kRebalanceMs = 30000;

// A consumer-protocol subscription to `topics` (version 0).
inline std::string Subscription(const std::vector<std::string>& topics) {
  std::string out;
  protocol::Encoder e(&out, 0, false);
  e.Int16(0);
  e.Int32(static_cast<int32_t>(topics.size()));
  for (const std::string& t : topics) e.String(t);
  e.Int32(-1);  // no user data
  return out;
}

class FakePersistence : public GroupPersistence {
 public:
  void StoreGroup(const GroupRecord& record,
                  absl::AnyInvocable<void(ErrorCode)> done) override {
    stored.push_back(record);
    if (hold) {
      held.push_back(std::move(done));
    } else {
      done(error);
    }
  }
  void ReleaseAll(ErrorCode e = ErrorCode::kNone) {
    auto callbacks = std::move(held);
    held.clear();
    for (auto& done : callbacks) done(e);
  }

  std::vector<GroupRecord> stored;
  ErrorCode error = ErrorCode::kNone;
  bool hold = false;
  std::vector<absl::AnyInvocable<void(ErrorCode)>> held;
};

// What a parked JoinGroup or SyncGroup eventually got.
struct Answers {
  std::optional<JoinResult> join;
  std::optional<SyncResult> sync;
};

class GroupTest : public ::testing::Test {
 protected:
  explicit GroupTest(GroupConfig config = {})
      : group_("g", config, clock_, persistence_) {}

  JoinArgs Args(std::string member_id, bool require_known = true,
                std::optional<std::string> instance_id = std::nullopt) {
    JoinArgs a;
    a.member_id = std::move(member_id);
    a.instance_id = std::move(instance_id);
    a.client_id = "client";
    a.client_host = "/127.0.0.1";
    a.session_timeout_ms = kSessionMs;
    a.rebalance_timeout_ms = kRebalanceMs;
    a.protocol_type = "consumer";
    a.protocols = {{"range", Subscription({"orders"})},
                   {"roundrobin", Subscription({"orders"})}};
    a.require_known_member_id = require_known;
    return a;
  }

  void Join(JoinArgs args, Answers* out) {
    out->join.reset();
    group_.Join(std::move(args),
                [out](JoinResult r) { out->join = std::move(r); });
  }

  void Sync(const std::string& member_id, int32_t generation, Answers* out,
            std::map<std::string, std::string> assignments = {},
            std::optional<std::string> instance_id = std::nullopt) {
    out->sync.reset();
    SyncArgs a;
    a.generation = generation;
    a.member_id = member_id;
    a.instance_id = std::move(instance_id);
    a.assignments = std::move(assignments);
    group_.Sync(std::move(a),
                [out](SyncResult r) { out->sync = std::move(r); });
  }

  // A new member's first join (v4+): MEMBER_ID_REQUIRED, then the join with
  // the id it got. Returns that id; the second join's answer is in *out.
  std::string JoinNew(Answers* out) {
    Join(Args(""), out);
    EXPECT_TRUE(out->join.has_value());
    EXPECT_EQ(out->join->error, ErrorCode::kMemberIdRequired);
    std::string id = out->join->member_id;
    EXPECT_THAT(id, ::testing::StartsWith("client-"));
    Join(Args(id), out);
    return id;
  }

  // One member in a Stable group at generation 1, with assignment "a-A".
  std::string StableWithOneMember() {
    Answers a;
    std::string id = JoinNew(&a);
    clock_.Advance(0);  // the initial delay (0) passes
    EXPECT_TRUE(a.join.has_value());
    Sync(id, 1, &a, {{id, "a-" + id}});
    EXPECT_EQ(group_.state(), GroupState::kStable);
    return id;
  }

  ManualClock clock_;
  FakePersistence persistence_;
  Group group_;
};

}  // namespace exactly::broker::testing

#endif  // EXACTLY_TESTS_UNIT_GROUP_GROUP_FIXTURE_H_
