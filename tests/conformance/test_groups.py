"""Consumer group membership as clients see it: JoinGroup's member ids and generations,
SyncGroup's assignments, Heartbeat's and LeaveGroup's errors, static members, and the admin view
(DescribeGroups, ListGroups, DeleteGroups). Observations never include member ids (the brokers
make them up); "is the leader" is the member's own comparison of leader with its id."""
import errors
from apis import LIST_GROUPS
from apis_group import (DELETE_GROUPS, DESCRIBE_GROUPS, JOIN_GROUP, LEAVE_GROUP,
                        OFFSET_DELETE, OFFSET_FETCH, SYNC_GROUP, assignment, commit,
                        group_connection, heartbeat, join, join_fields, leader_and_follower,
                        stable_member, subscription, sync, sync_fields)
from side_by_side import scenario, unique, wait_until


def err(answer):
    return errors.name(answer["error_code"])


def plain(data, topics):
    """Embedded bytes with each of `topics` (the brokers' own names) written as <topic>."""
    for t in topics:
        data = data.replace(t.encode(), b"<topic>")
    return data


def joined_view(answer, topics=()):
    """What a member learns from a JoinGroup answer, without the ids themselves."""
    return {"error": err(answer), "generation": answer["generation_id"],
            "protocol_type": answer.get("protocol_type"),
            "protocol_name": answer["protocol_name"],
            "is_leader": answer["leader"] == answer["member_id"] != "",
            "members": sorted(plain(m["metadata"], topics) for m in answer["members"])}


def describe(conn, group):
    return conn.call(DESCRIBE_GROUPS, 5, groups=[group])["groups"][0]


def described_view(d, topics=()):
    """A DescribeGroups answer for one group (`topics` as in plain)."""
    return {"error": err(d), "state": d["group_state"], "protocol_type": d["protocol_type"],
            "protocol": d["protocol_data"],
            "members": sorted((m["group_instance_id"], m["client_id"], m["client_host"],
                               plain(m["member_metadata"], topics),
                               plain(m["member_assignment"], topics))
                              for m in d["members"])}


# --- JoinGroup, SyncGroup, Heartbeat ------------------------------------------------------

@scenario
def test_join_without_member_id_requires_one(broker):
    """KIP-394 (JoinGroup v4+): a new member is handed its id with MEMBER_ID_REQUIRED and only
    joins when it comes back with it; clients rely on the id being in that error answer."""
    group = unique("g-memberid")
    with group_connection(broker, group) as conn:
        first = conn.call(JOIN_GROUP, 9, **join_fields(group))
        assert first["member_id"], "MEMBER_ID_REQUIRED must carry the member id"
        second = conn.call(JOIN_GROUP, 9, **join_fields(group, member_id=first["member_id"]))
        assert second["member_id"] == first["member_id"]
        return {"first": {"error": err(first), "generation": first["generation_id"],
                          "protocol_name": first["protocol_name"],
                          "leader": first["leader"], "members": first["members"]},
                "second": joined_view(second)}


@scenario
def test_join_sync_heartbeat_cycle(broker):
    """A one-member group from join to Stable: generation 1, the protocol chosen, the member
    told it leads, the leader's assignment bytes handed back unchanged, heartbeats accepted."""
    group = unique("g-cycle")
    with group_connection(broker, group) as conn:
        joined = join(conn, group, topics=["orders", "audit"])
        mine = assignment({"orders": [0, 1], "audit": [2]})
        synced = sync(conn, group, joined, {joined["member_id"]: mine})
        beat = heartbeat(conn, group, joined["generation_id"], joined["member_id"])
        return {"joined": joined_view(joined), "sync_error": err(synced),
                "sync_protocol": (synced["protocol_type"], synced["protocol_name"]),
                "assignment_round_trip": synced["assignment"] == mine,
                "heartbeat": beat, "described": described_view(describe(conn, group))}


@scenario
def test_heartbeat_errors(broker):
    """Heartbeat tells a member it is unknown (rejoin from scratch) or of an old generation
    (rejoin): UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION, also for a group nobody joined."""
    group = unique("g-heartbeat")
    conn, joined, _ = stable_member(broker, group)
    with conn:
        generation, member = joined["generation_id"], joined["member_id"]
        return {"ok": heartbeat(conn, group, generation, member),
                "unknown_member": heartbeat(conn, group, generation, member + "-x"),
                "old_generation": heartbeat(conn, group, generation - 1, member),
                "newer_generation": heartbeat(conn, group, generation + 1, member),
                "unknown_group": heartbeat(conn, unique("g-nobody"), 1, member)}


@scenario
def test_second_member_forces_rebalance(broker):
    """A member joining a Stable group starts a rebalance: the current member's heartbeat says
    REBALANCE_IN_PROGRESS (and its commits still pass) until it rejoins; then both get
    generation 2 with one leader, and both get their own assignment."""
    group = unique("g-rebalance")
    topic = broker.topic(partitions=2)
    conn_a, joined_a, _ = stable_member(broker, group, topics=[topic])
    conn_b = group_connection(broker, group)
    with conn_a, conn_b:
        first_b = conn_b.call(JOIN_GROUP, 9, **join_fields(group, topics=[topic, "u"]))
        pending = conn_b.send(JOIN_GROUP, 9, **join_fields(
            group, member_id=first_b["member_id"], topics=[topic, "u"]))
        seen = {}

        def rebalancing():
            seen["state"] = describe(conn_a, group)["group_state"]
            return seen["state"] == "PreparingRebalance"
        wait_until(rebalancing, "the group to prepare a rebalance")
        during = {"state": seen["state"],
                  "heartbeat": heartbeat(conn_a, group, joined_a["generation_id"],
                                         joined_a["member_id"]),
                  "commit": commit(conn_a, group, {(topic, 0): 5},
                                   generation=joined_a["generation_id"],
                                   member_id=joined_a["member_id"])}
        rejoined_a = conn_a.call(JOIN_GROUP, 9, **join_fields(
            group, member_id=joined_a["member_id"], topics=[topic]))
        joined_b = conn_b.receive(JOIN_GROUP, 9, pending)
        leader, follower = leader_and_follower((conn_a, rejoined_a), (conn_b, joined_b))
        completing = describe(conn_a, group)["group_state"]
        plan = {leader[1]["member_id"]: assignment({topic: [0]}),
                follower[1]["member_id"]: assignment({topic: [1], "u": [0]})}
        follower_sync = follower[0].send(SYNC_GROUP, 5, **sync_fields(group, follower[1]))
        leader_synced = sync(leader[0], group, leader[1], plan)
        follower_synced = follower[0].receive(SYNC_GROUP, 5, follower_sync)
        return {"during": during,
                "a": joined_view(rejoined_a, [topic]), "b": joined_view(joined_b, [topic]),
                "leaders": [joined_view(rejoined_a)["is_leader"],
                            joined_view(joined_b)["is_leader"]].count(True),
                "completing": completing,
                "syncs": [err(leader_synced), err(follower_synced)],
                "assignments": [leader_synced["assignment"] == plan[leader[1]["member_id"]],
                                follower_synced["assignment"] ==
                                plan[follower[1]["member_id"]]],
                "after": describe(conn_a, group)["group_state"]}


@scenario
def test_member_that_does_not_rejoin_is_dropped(broker):
    """A rebalance waits for every member at most the rebalance timeout (the largest of the
    members'); one that did not rejoin by then is out of the group, and its heartbeat says
    UNKNOWN_MEMBER_ID."""
    group = unique("g-dropped")
    conn_a = group_connection(broker, group)
    conn_b = group_connection(broker, group)
    with conn_a, conn_b:
        joined_a = join(conn_a, group, rebalance_timeout_ms=1000)
        sync(conn_a, group, joined_a, {joined_a["member_id"]: b"a"})
        first_b = conn_b.call(JOIN_GROUP, 9, **join_fields(group, rebalance_timeout_ms=1000))
        joined_b = conn_b.call(JOIN_GROUP, 9, **join_fields(
            group, member_id=first_b["member_id"], rebalance_timeout_ms=1000))
        return {"b": joined_view(joined_b), "b_members": len(joined_b["members"]),
                "a_heartbeat": heartbeat(conn_a, group, joined_a["generation_id"],
                                         joined_a["member_id"]),
                "a_rejoin": err(conn_a.call(JOIN_GROUP, 9, **join_fields(
                    group, member_id=joined_a["member_id"]))),
                "described": described_view(describe(conn_b, group))}


@scenario
def test_join_before_v4_needs_no_member_id_round(broker):
    """Clients older than KIP-394 (JoinGroup v0-v3) join in one request: no MEMBER_ID_REQUIRED,
    the member id comes with the completed join."""
    group = unique("g-v3")
    with group_connection(broker, group) as conn:
        joined = conn.call(JOIN_GROUP, 3, **join_fields(group))
        assert joined["member_id"]
        return joined_view(joined)


@scenario
def test_join_with_unknown_member_id(broker):
    """A JoinGroup naming a member id the group does not know (a member removed while it was
    away) is UNKNOWN_MEMBER_ID, so that the client joins again without one."""
    group = unique("g-unknown-member")
    conn, joined, _ = stable_member(broker, group)
    with conn:
        return {"known_group": err(conn.call(JOIN_GROUP, 9, **join_fields(
                    group, member_id=joined["member_id"] + "-x"))),
                "unknown_group": err(conn.call(JOIN_GROUP, 9, **join_fields(
                    unique("g-nobody"), member_id="someone"))),
                "old_version_unknown_group": err(conn.call(JOIN_GROUP, 3, **join_fields(
                    unique("g-nobody"), member_id="someone"))),
                "state": describe(conn, group)["group_state"]}


@scenario
def test_leave_during_sync_sends_the_others_back_to_join(broker):
    """A member leaving while the group waits for the leader's assignment (CompletingRebalance)
    starts a new rebalance: a follower's parked SyncGroup is answered REBALANCE_IN_PROGRESS."""
    group = unique("g-leave-sync")
    conn_a, joined_a, _ = stable_member(broker, group)
    conn_b = group_connection(broker, group)
    with conn_a, conn_b:
        first_b = conn_b.call(JOIN_GROUP, 9, **join_fields(group))
        parked_join = conn_b.send(JOIN_GROUP, 9, **join_fields(
            group, member_id=first_b["member_id"]))
        wait_until(lambda: describe(conn_a, group)["group_state"] == "PreparingRebalance",
                   "the rebalance")
        rejoined_a = conn_a.call(JOIN_GROUP, 9, **join_fields(
            group, member_id=joined_a["member_id"]))
        joined_b = conn_b.receive(JOIN_GROUP, 9, parked_join)
        leader, follower = leader_and_follower((conn_a, rejoined_a), (conn_b, joined_b))
        parked_sync = follower[0].send(SYNC_GROUP, 5, **sync_fields(group, follower[1]))
        left = leader[0].call(LEAVE_GROUP, 5, group_id=group, members=[
            {"member_id": leader[1]["member_id"], "group_instance_id": None, "reason": None}])
        follower_sync = follower[0].receive(SYNC_GROUP, 5, parked_sync)
        return {"leave": (err(left), [err(m) for m in left["members"]]),
                "follower_sync": err(follower_sync),
                "state": describe(follower[0], group)["group_state"],
                "follower_heartbeat": heartbeat(follower[0], group,
                                                follower[1]["generation_id"],
                                                follower[1]["member_id"])}


@scenario
def test_sync_errors(broker):
    """SyncGroup from an unknown member, of another generation, naming another protocol, or to
    a group nobody joined: each answered with its own error, the group staying Stable."""
    group = unique("g-sync")
    conn, joined, _ = stable_member(broker, group)
    with conn:
        def sync_as(**changes):
            fields = dict(group_id=group, generation_id=joined["generation_id"],
                          member_id=joined["member_id"], group_instance_id=None,
                          protocol_type="consumer", protocol_name=joined["protocol_name"],
                          assignments=[])
            fields.update(changes)
            return err(conn.call(SYNC_GROUP, 5, **fields))
        return {"ok": sync_as(),
                "unknown_member": sync_as(member_id=joined["member_id"] + "-x"),
                "old_generation": sync_as(generation_id=joined["generation_id"] - 1),
                "newer_generation": sync_as(generation_id=joined["generation_id"] + 1),
                "other_protocol_type": sync_as(protocol_type="connect"),
                "other_protocol_name": sync_as(protocol_name="roundrobin"),
                "unknown_group": sync_as(group_id=unique("g-nobody")),
                "state": describe(conn, group)["group_state"]}


@scenario
def test_inconsistent_group_protocol(broker):
    """A member must share the group's protocol type and at least one protocol with every
    member (INCONSISTENT_GROUP_PROTOCOL otherwise, before a member id is handed out); a first
    member must offer a type and a protocol at all."""
    group = unique("g-protocol")
    conn, joined, _ = stable_member(broker, group)
    with conn:
        def first_join(group_id, **fields):
            return err(conn.call(JOIN_GROUP, 9, **join_fields(group_id, **fields)))
        empty_group = unique("g-protocol-empty")
        return {"other_type": first_join(group, protocol_type="connect"),
                "no_common_protocol": first_join(group, protocols=[
                    {"name": "roundrobin", "metadata": subscription(["t"])}]),
                "one_in_common_is_enough": first_join(group, protocols=[
                    {"name": "sticky", "metadata": subscription(["t"])},
                    {"name": "range", "metadata": subscription(["t"])}]),
                "first_member_no_protocols": first_join(empty_group, protocols=[]),
                "first_member_no_type": first_join(empty_group, protocol_type=""),
                "state": describe(conn, group)["group_state"]}


@scenario(differs={"below_kafka_minimum": "the bundled broker accepts session timeouts from "
                                          "1000 ms (BrokerOptions::group_min_session_timeout_ms,"
                                          " short sessions for tests); Kafka from 6000 ms"})
def test_session_timeout_out_of_range(broker):
    """JoinGroup's session timeout must lie within the broker's group.min/max.session.timeout.ms
    (INVALID_SESSION_TIMEOUT otherwise, before any member id is handed out)."""
    group = unique("g-session")
    with group_connection(broker, group) as conn:
        def first_join(ms):
            return err(conn.call(JOIN_GROUP, 9, **join_fields(group, session_timeout_ms=ms)))
        return {"below": first_join(500), "above": first_join(1_800_001),
                "within": [first_join(ms) for ms in (6000, 10000, 600_000, 1_800_000)],
                "below_kafka_minimum": first_join(3000)}


@scenario
def test_empty_group_id(broker):
    """An empty group id: refused (INVALID_GROUP_ID) by the membership APIs and OffsetDelete;
    OffsetCommit, OffsetFetch, DescribeGroups and DeleteGroups take "" as a group name like any
    other (Kafka keeps it for old clients that commit offsets without a group)."""
    topic = broker.topic()
    with broker.connect() as conn:
        return {
            "join": err(conn.call(JOIN_GROUP, 9, **join_fields(""))),
            "sync": err(conn.call(SYNC_GROUP, 5, group_id="", generation_id=1, member_id="m",
                                  group_instance_id=None, protocol_type="consumer",
                                  protocol_name="range", assignments=[])),
            "heartbeat": heartbeat(conn, "", 1, "m"),
            "leave": err(conn.call(LEAVE_GROUP, 5, group_id="", members=[
                {"member_id": "m", "group_instance_id": None, "reason": None}])),
            "commit": commit(conn, "", {(topic, 0): 3}),
            "fetch": err(conn.call(OFFSET_FETCH, 7, group_id="", topics=None,
                                   require_stable=False)),
            "describe": err(describe(conn, "")),
            "offset_delete": err(conn.call(OFFSET_DELETE, 0, group_id="", topics=[
                {"name": topic, "partitions": [{"partition_index": 0}]}])),
            "delete": [err(r) for r in conn.call(DELETE_GROUPS, 2,
                                                 groups_names=[""])["results"]],
        }


# --- static membership --------------------------------------------------------------------

@scenario
def test_static_member_rejoins_without_rebalance(broker):
    """KIP-345: a static member (group.instance.id) that restarts and joins again without its
    member id gets a new id and its old assignment, at the same generation, with no rebalance;
    its old member id is fenced (FENCED_INSTANCE_ID) everywhere."""
    group = unique("g-static")
    topic = broker.topic()
    old_conn, old, old_synced = stable_member(broker, group, topics=[topic],
                                              instance_id="instance-1")
    with old_conn, group_connection(broker, group) as conn:
        again = join(conn, group, topics=[topic], instance_id="instance-1")
        assert again["member_id"] != old["member_id"]
        synced = sync(conn, group, again, instance_id="instance-1")
        old_id = old["member_id"]
        seen = {
            "rejoined": {"error": err(again), "generation": again["generation_id"],
                         "protocol_name": again["protocol_name"],
                         "skip_assignment": again["skip_assignment"],
                         "is_leader": again["leader"] == again["member_id"],
                         "members": len(again["members"])},
            "sync": err(synced),
            "old_assignment_back": synced["assignment"] == old_synced["assignment"],
            "state": describe(conn, group)["group_state"],
            "new_heartbeat": heartbeat(conn, group, again["generation_id"], again["member_id"],
                                       "instance-1"),
            "old_heartbeat": heartbeat(conn, group, old["generation_id"], old_id, "instance-1"),
            "old_sync": err(sync(old_conn, group, old, instance_id="instance-1")),
            "old_commit": commit(old_conn, group, {(topic, 0): 1},
                                 generation=old["generation_id"], member_id=old_id,
                                 instance_id="instance-1"),
            "old_leave": [errors.name(m["error_code"]) for m in old_conn.call(
                LEAVE_GROUP, 5, group_id=group, members=[
                    {"member_id": old_id, "group_instance_id": "instance-1",
                     "reason": None}])["members"]],
            "described": described_view(describe(conn, group), [topic]),
        }
        with group_connection(broker, group) as third:
            # Before v9 (KIP-814) the answer names the old leader id, so the restarted leader
            # syncs as a follower and does not reassign.
            v8 = join(third, group, version=8, topics=[topic], instance_id="instance-1")
            seen["restart_v8"] = {"error": err(v8), "generation": v8["generation_id"],
                                  "is_leader": v8["leader"] == v8["member_id"],
                                  "leader_is_previous_id": v8["leader"] == again["member_id"],
                                  "members": len(v8["members"])}
        return seen


@scenario
def test_static_member_join_with_unknown_member_id(broker):
    """A static member naming a member id the group does not hold for its instance id is
    fenced, and one naming an instance id the group does not know is unknown."""
    group = unique("g-static-unknown")
    conn, joined, _ = stable_member(broker, group, instance_id="instance-1")
    with conn:
        return {
            "other_id": err(conn.call(JOIN_GROUP, 9, **join_fields(
                group, member_id=joined["member_id"] + "-x", instance_id="instance-1"))),
            "unknown_instance": err(conn.call(JOIN_GROUP, 9, **join_fields(
                group, member_id=joined["member_id"], instance_id="instance-2"))),
            "heartbeat_unknown_instance": heartbeat(conn, group, joined["generation_id"],
                                                    joined["member_id"], "instance-2"),
            "state": describe(conn, group)["group_state"]}


# --- LeaveGroup ---------------------------------------------------------------------------

@scenario
def test_leave_group_by_member_identity(broker):
    """LeaveGroup v3+ (KIP-345) removes several members, dynamic ones by member id and static
    ones by instance id, each with its own error; the request itself succeeds. A member that
    leaves while its JoinGroup is parked gets UNKNOWN_MEMBER_ID for that join."""
    group = unique("g-leave")
    conn_a, joined_a, _ = stable_member(broker, group, instance_id="static-a")
    conn_b = group_connection(broker, group)
    with conn_a, conn_b:
        first_b = conn_b.call(JOIN_GROUP, 9, **join_fields(group))
        parked_b = conn_b.send(JOIN_GROUP, 9, **join_fields(group,
                                                            member_id=first_b["member_id"]))
        wait_until(lambda: describe(conn_a, group)["group_state"] == "PreparingRebalance",
                   "the rebalance")
        answer = conn_a.call(LEAVE_GROUP, 5, group_id=group, members=[
            {"member_id": first_b["member_id"], "group_instance_id": None, "reason": None},
            {"member_id": "", "group_instance_id": "static-a", "reason": "done"},
            {"member_id": "nobody", "group_instance_id": None, "reason": None},
            {"member_id": "", "group_instance_id": "static-unknown", "reason": None},
        ])
        b_join = conn_b.receive(JOIN_GROUP, 9, parked_b)
        wait_until(lambda: describe(conn_a, group)["group_state"] == "Empty", "an empty group")
        unknown_group = conn_a.call(LEAVE_GROUP, 5, group_id=unique("g-nobody"), members=[
            {"member_id": "m", "group_instance_id": None, "reason": None}])
        return {"error": err(answer),
                "members": [(m["group_instance_id"], m["member_id"] == first_b["member_id"],
                             err(m)) for m in answer["members"]],
                "parked_join": err(b_join),
                "after": described_view(describe(conn_a, group)),
                "unknown_group": (err(unknown_group),
                                  [err(m) for m in unknown_group["members"]])}


@scenario
def test_leave_group_dynamic_member_and_old_version(broker):
    """A dynamic member leaving by its id (v5) empties the group; LeaveGroup v2's single member
    id gives its error at the top level."""
    group = unique("g-leave-dyn")
    conn, joined, _ = stable_member(broker, group)
    with conn:
        v2_unknown = err(conn.call(LEAVE_GROUP, 2, group_id=group, member_id="nobody"))
        v5 = conn.call(LEAVE_GROUP, 5, group_id=group, members=[
            {"member_id": joined["member_id"], "group_instance_id": None, "reason": None}])
        return {"v2_unknown": v2_unknown, "v5": (err(v5), [err(m) for m in v5["members"]]),
                "after": described_view(describe(conn, group)),
                "rejoin_old_id": err(conn.call(JOIN_GROUP, 9, **join_fields(
                    group, member_id=joined["member_id"])))}


# --- DescribeGroups, ListGroups, DeleteGroups ---------------------------------------------

@scenario
def test_describe_group_states(broker):
    """DescribeGroups through a group's life: Dead (never known), Empty (offsets only),
    Stable with its protocol and members' metadata and assignments, PreparingRebalance and
    CompletingRebalance (no protocol, no metadata), Empty again once everyone left."""
    group = unique("g-states")
    topic = broker.topic()
    states = {}
    with group_connection(broker, group) as conn:
        states["unknown"] = described_view(describe(conn, group))
        commit(conn, group, {(topic, 0): 1})
        states["offsets_only"] = described_view(describe(conn, group))
        joined = join(conn, group, topics=[topic])
        states["after_join"] = described_view(describe(conn, group))
        sync(conn, group, joined, {joined["member_id"]: assignment({topic: [0]})})
        states["stable"] = described_view(describe(conn, group), [topic])
        with group_connection(broker, group) as other:
            first = other.call(JOIN_GROUP, 9, **join_fields(group, topics=[topic]))
            parked = other.send(JOIN_GROUP, 9, **join_fields(
                group, member_id=first["member_id"], topics=[topic]))
            wait_until(lambda: describe(conn, group)["group_state"] == "PreparingRebalance",
                       "the rebalance")
            states["preparing"] = described_view(describe(conn, group))
            conn.call(JOIN_GROUP, 9, **join_fields(group, member_id=joined["member_id"],
                                                    topics=[topic]))
            second = other.receive(JOIN_GROUP, 9, parked)
            states["completing"] = described_view(describe(conn, group))
            conn.call(LEAVE_GROUP, 5, group_id=group, members=[
                {"member_id": m, "group_instance_id": None, "reason": None}
                for m in (joined["member_id"], second["member_id"])])
        wait_until(lambda: describe(conn, group)["group_state"] == "Empty", "the group to empty")
        states["left"] = described_view(describe(conn, group))
        many = conn.call(DESCRIBE_GROUPS, 5, groups=[group, unique("g-nobody")],
                         include_authorized_operations=True)["groups"]
        states["two_at_once"] = [(err(g), g["group_state"], g["authorized_operations"])
                                 for g in many]
    return states


@scenario
def test_list_groups(broker):
    """ListGroups names every group with its protocol type and (v4+) state, filtered by state
    case-insensitively; v5 adds the group type (classic) and a type filter."""
    topic = broker.topic()
    stable_group, empty_group = unique("g-list-stable"), unique("g-list-empty")
    conn, _, _ = stable_member(broker, stable_group, topics=[topic])
    with conn:
        commit(conn, empty_group, {(topic, 0): 1})
        mine = {stable_group: "stable", empty_group: "empty"}

        def listed(version, **filters):
            answer = conn.call(LIST_GROUPS, version, **filters)
            return (err(answer), sorted((mine[g["group_id"]], g["protocol_type"],
                                         g.get("group_state"), g.get("group_type"))
                                        for g in answer["groups"] if g["group_id"] in mine))
        return {"v3": listed(3), "v4": listed(4), "v5": listed(5),
                "stable_only": listed(4, states_filter=["stable"]),
                "empty_only": listed(4, states_filter=["Empty"]),
                "dead_only": listed(4, states_filter=["Dead"]),
                "classic": listed(5, types_filter=["Classic"]),
                "consumer_type": listed(5, types_filter=["consumer"])}


@scenario
def test_delete_groups(broker):
    """DeleteGroups deletes Empty groups with their offsets; a group with members is
    NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND, each in its own result."""
    topic = broker.topic()
    busy, idle, unknown = unique("g-del-busy"), unique("g-del-idle"), unique("g-del-unknown")
    conn, _, _ = stable_member(broker, busy, topics=[topic])
    with conn, group_connection(broker, idle) as idle_conn:
        commit(idle_conn, idle, {(topic, 0): 7})
        answer = idle_conn.call(DELETE_GROUPS, 2, groups_names=[busy, idle, unknown])
        by_group = {r["group_id"]: err(r) for r in answer["results"]}
        again = idle_conn.call(DELETE_GROUPS, 2, groups_names=[idle])
        fetched = idle_conn.call(OFFSET_FETCH, 7, group_id=idle, topics=[
            {"name": topic, "partition_indexes": [0]}], require_stable=False)
        return {"busy": by_group[busy], "idle": by_group[idle], "unknown": by_group[unknown],
                "results": len(answer["results"]),
                "idle_again": err(again["results"][0]),
                "idle_offset_after": fetched["topics"][0]["partitions"][0]["committed_offset"],
                "idle_described": describe(idle_conn, idle)["group_state"],
                "busy_described": describe(conn, busy)["group_state"],
                "commit_after_delete": commit(idle_conn, idle, {(topic, 0): 8})}


@scenario
def test_commit_while_completing_rebalance(broker):
    """Between JoinGroup and SyncGroup (CompletingRebalance) a member's commit is refused with
    REBALANCE_IN_PROGRESS: it has a generation but no assignment yet."""
    group = unique("g-completing")
    topic = broker.topic()
    with group_connection(broker, group) as conn:
        joined = join(conn, group, topics=[topic])
        during = commit(conn, group, {(topic, 0): 1}, generation=joined["generation_id"],
                        member_id=joined["member_id"])
        heartbeat_during = heartbeat(conn, group, joined["generation_id"], joined["member_id"])
        sync(conn, group, joined, {joined["member_id"]: assignment({topic: [0]})})
        after = commit(conn, group, {(topic, 0): 2}, generation=joined["generation_id"],
                       member_id=joined["member_id"])
        return {"commit_during": during,
                "heartbeat_during": heartbeat_during, "commit_after": after,
                "simple_commit_with_members": commit(conn, group, {(topic, 0): 3})}
