"""Consumer groups and their offsets: the schemas of the group APIs (JoinGroup, SyncGroup,
Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups, DeleteGroups, OffsetDelete,
and the transactional AddOffsetsToTxn, TxnOffsetCommit and EndTxn that leave an offset
pending; ListGroups is in tests/wire/apis.py, shared with tests/kafka), written from Kafka's
message definitions at the versions the group scenarios use, and the few calls that take a
member through them (test_groups.py, test_offsets.py).

Every nullable string a scenario does not mean to set (group_instance_id above all: "" would
make the member a static one) is passed as None explicitly; wire.py fills an unnamed field with
"" otherwise."""
from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Sequence

import errors
from side_by_side import RETRIABLE, Broker, wait_until
from wire import Api, Connection

JOIN_GROUP = Api(11, "JoinGroup", 6, request=[
    ("group_id", "string", "0+"),
    ("session_timeout_ms", "int32", "0+"),
    ("rebalance_timeout_ms", "int32", "1+"),
    ("member_id", "string", "0+"),
    ("group_instance_id", "string", "5+"),
    ("protocol_type", "string", "0+"),
    ("protocols", [("name", "string", "0+"), ("metadata", "bytes", "0+")], "0+"),
    ("reason", "string", "8+"),
], response=[
    ("throttle_time_ms", "int32", "2+"),
    ("error_code", "int16", "0+"),
    ("generation_id", "int32", "0+"),
    ("protocol_type", "string", "7+"),
    ("protocol_name", "string", "0+"),
    ("leader", "string", "0+"),
    ("skip_assignment", "bool", "9+"),
    ("member_id", "string", "0+"),
    ("members", [("member_id", "string", "0+"), ("group_instance_id", "string", "5+"),
                 ("metadata", "bytes", "0+")], "0+"),
])

SYNC_GROUP = Api(14, "SyncGroup", 4, request=[
    ("group_id", "string", "0+"),
    ("generation_id", "int32", "0+"),
    ("member_id", "string", "0+"),
    ("group_instance_id", "string", "3+"),
    ("protocol_type", "string", "5+"),
    ("protocol_name", "string", "5+"),
    ("assignments", [("member_id", "string", "0+"), ("assignment", "bytes", "0+")], "0+"),
], response=[
    ("throttle_time_ms", "int32", "1+"),
    ("error_code", "int16", "0+"),
    ("protocol_type", "string", "5+"),
    ("protocol_name", "string", "5+"),
    ("assignment", "bytes", "0+"),
])

HEARTBEAT = Api(12, "Heartbeat", 4, request=[
    ("group_id", "string", "0+"),
    ("generation_id", "int32", "0+"),
    ("member_id", "string", "0+"),
    ("group_instance_id", "string", "3+"),
], response=[
    ("throttle_time_ms", "int32", "1+"),
    ("error_code", "int16", "0+"),
])

LEAVE_GROUP = Api(13, "LeaveGroup", 4, request=[
    ("group_id", "string", "0+"),
    ("member_id", "string", "0-2"),
    ("members", [("member_id", "string", "3+"), ("group_instance_id", "string", "3+"),
                 ("reason", "string", "5+")], "3+"),
], response=[
    ("throttle_time_ms", "int32", "1+"),
    ("error_code", "int16", "0+"),
    ("members", [("member_id", "string", "3+"), ("group_instance_id", "string", "3+"),
                 ("error_code", "int16", "3+")], "3+"),
])

OFFSET_COMMIT = Api(8, "OffsetCommit", 8, request=[
    ("group_id", "string", "0+"),
    ("generation_id", "int32", "1+"),
    ("member_id", "string", "1+"),
    ("group_instance_id", "string", "7+"),
    ("retention_time_ms", "int64", "2-4"),
    ("topics", [
        ("name", "string", "0+"),
        ("partitions", [
            ("partition_index", "int32", "0+"),
            ("committed_offset", "int64", "0+"),
            ("committed_leader_epoch", "int32", "6+"),
            ("commit_timestamp", "int64", "1"),
            ("committed_metadata", "string", "0+"),
        ], "0+"),
    ], "0+"),
], response=[
    ("throttle_time_ms", "int32", "3+"),
    ("topics", [("name", "string", "0+"),
                ("partitions", [("partition_index", "int32", "0+"),
                                ("error_code", "int16", "0+")], "0+")], "0+"),
])

_FETCHED_PARTITION = [
    ("partition_index", "int32", "0+"),
    ("committed_offset", "int64", "0+"),
    ("committed_leader_epoch", "int32", "5+"),
    ("metadata", "string", "0+"),
    ("error_code", "int16", "0+"),
]

OFFSET_FETCH = Api(9, "OffsetFetch", 6, request=[
    ("group_id", "string", "0-7"),
    ("topics", [("name", "string", "0-7"), ("partition_indexes", ["int32"], "0-7")], "0-7"),
    ("groups", [
        ("group_id", "string", "8+"),
        ("member_id", "string", "9+"),
        ("member_epoch", "int32", "9+"),
        ("topics", [("name", "string", "8+"), ("partition_indexes", ["int32"], "8+")], "8+"),
    ], "8+"),
    ("require_stable", "bool", "7+"),
], response=[
    ("throttle_time_ms", "int32", "3+"),
    ("topics", [("name", "string", "0-7"), ("partitions", _FETCHED_PARTITION, "0-7")], "0-7"),
    ("error_code", "int16", "2-7"),
    ("groups", [
        ("group_id", "string", "8+"),
        ("topics", [("name", "string", "8+"), ("partitions", _FETCHED_PARTITION, "8+")], "8+"),
        ("error_code", "int16", "8+"),
    ], "8+"),
])

DESCRIBE_GROUPS = Api(15, "DescribeGroups", 5, request=[
    ("groups", ["string"], "0+"),
    ("include_authorized_operations", "bool", "3+"),
], response=[
    ("throttle_time_ms", "int32", "1+"),
    ("groups", [
        ("error_code", "int16", "0+"),
        ("group_id", "string", "0+"),
        ("group_state", "string", "0+"),
        ("protocol_type", "string", "0+"),
        ("protocol_data", "string", "0+"),
        ("members", [
            ("member_id", "string", "0+"),
            ("group_instance_id", "string", "4+"),
            ("client_id", "string", "0+"),
            ("client_host", "string", "0+"),
            ("member_metadata", "bytes", "0+"),
            ("member_assignment", "bytes", "0+"),
        ], "0+"),
        ("authorized_operations", "int32", "3+"),
    ], "0+"),
])

DELETE_GROUPS = Api(42, "DeleteGroups", 2, request=[
    ("groups_names", ["string"], "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("results", [("group_id", "string", "0+"), ("error_code", "int16", "0+")], "0+"),
])

OFFSET_DELETE = Api(47, "OffsetDelete", None, request=[
    ("group_id", "string", "0+"),
    ("topics", [("name", "string", "0+"),
                ("partitions", [("partition_index", "int32", "0+")], "0+")], "0+"),
], response=[
    ("error_code", "int16", "0+"),
    ("throttle_time_ms", "int32", "0+"),
    ("topics", [("name", "string", "0+"),
                ("partitions", [("partition_index", "int32", "0+"),
                                ("error_code", "int16", "0+")], "0+")], "0+"),
])

# --- the consumer protocol's embedded bytes (ConsumerProtocolSubscription / Assignment v0) ---

def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def subscription(topics: Sequence[str]) -> bytes:
    """A consumer's JoinGroup metadata (v0): the topics it subscribes to, no user data. The
    coordinator reads it to know which topics a group consumes (OffsetDelete)."""
    return (struct.pack(">hi", 0, len(topics)) + b"".join(_string(t) for t in topics) +
            struct.pack(">i", -1))


def assignment(partitions: Dict[str, Sequence[int]]) -> bytes:
    """A member's SyncGroup assignment (v0): topic -> partitions, no user data."""
    out = struct.pack(">hi", 0, len(partitions))
    for topic, parts in partitions.items():
        out += _string(topic) + struct.pack(">i", len(parts))
        out += b"".join(struct.pack(">i", p) for p in parts)
    return out + struct.pack(">i", -1)


# --- a member ------------------------------------------------------------------------------

SESSION_MS = 10000
REBALANCE_MS = 20000


def join_fields(group: str, member_id: str = "", instance_id: Optional[str] = None,
                topics: Sequence[str] = ("t",), protocols: Optional[List[Dict[str, Any]]] = None,
                protocol_type: str = "consumer", session_timeout_ms: int = SESSION_MS,
                rebalance_timeout_ms: int = REBALANCE_MS) -> Dict[str, Any]:
    """A JoinGroup request's fields: a consumer offering the "range" protocol by default."""
    if protocols is None:
        protocols = [{"name": "range", "metadata": subscription(topics)}]
    return dict(group_id=group, session_timeout_ms=session_timeout_ms,
                rebalance_timeout_ms=rebalance_timeout_ms, member_id=member_id,
                group_instance_id=instance_id, protocol_type=protocol_type,
                protocols=protocols, reason=None)


def group_connection(broker: Broker, group: str) -> Connection:
    """A connection to the group's coordinator, once one is named and ready: a first
    DescribeGroups is retried while Kafka still loads its offsets partition."""
    result = {}

    def ready():
        conn = broker.coordinator(group, 0)
        answer = conn.call(DESCRIBE_GROUPS, 5, groups=[group])
        if errors.name(answer["groups"][0]["error_code"]) in RETRIABLE:
            conn.close()
            return False
        result["conn"] = conn
        return True
    wait_until(ready, f"the coordinator of group {group!r} to answer")
    return result["conn"]


def join(conn: Connection, group: str, version: int = 9, **fields: Any) -> Dict[str, Any]:
    """A new member's JoinGroup, through MEMBER_ID_REQUIRED when the version asks for it (v4+;
    static members get their id at once): the completed join's answer."""
    answer = conn.call(JOIN_GROUP, version, **join_fields(group, **fields))
    if errors.name(answer["error_code"]) == "MEMBER_ID_REQUIRED":
        fields["member_id"] = answer["member_id"]
        answer = conn.call(JOIN_GROUP, version, **join_fields(group, **fields))
    return answer


def sync_fields(group: str, joined: Dict[str, Any],
                assignments: Optional[Dict[str, bytes]] = None,
                instance_id: Optional[str] = None) -> Dict[str, Any]:
    """A SyncGroup request's fields for the member of a JoinGroup answer (the leader passes
    every member's assignment)."""
    return dict(group_id=group, generation_id=joined["generation_id"],
                member_id=joined["member_id"], group_instance_id=instance_id,
                protocol_type=joined.get("protocol_type", "consumer"),
                protocol_name=joined["protocol_name"],
                assignments=[{"member_id": m, "assignment": a}
                             for m, a in (assignments or {}).items()])


def sync(conn: Connection, group: str, joined: Dict[str, Any],
         assignments: Optional[Dict[str, bytes]] = None, instance_id: Optional[str] = None,
         version: int = 5) -> Dict[str, Any]:
    return conn.call(SYNC_GROUP, version, **sync_fields(group, joined, assignments, instance_id))


def leader_and_follower(*members):
    """Two (connection, JoinGroup answer) pairs of one generation, the leader's first."""
    first, second = members
    return (first, second) if first[1]["leader"] == first[1]["member_id"] else (second, first)


def heartbeat(conn: Connection, group: str, generation: int, member_id: str,
              instance_id: Optional[str] = None) -> str:
    answer = conn.call(HEARTBEAT, 4, group_id=group, generation_id=generation,
                       member_id=member_id, group_instance_id=instance_id)
    return errors.name(answer["error_code"])


def stable_member(broker: Broker, group: str, topics: Sequence[str] = ("t",),
                  instance_id: Optional[str] = None,
                  assigned: Optional[Dict[str, Sequence[int]]] = None):
    """A one-member group, Stable: (connection, the join's answer, the sync's answer). The
    member assigns itself `assigned` (default: partition 0 of each topic)."""
    conn = group_connection(broker, group)
    joined = join(conn, group, topics=topics, instance_id=instance_id)
    assert errors.name(joined["error_code"]) == "NONE", errors.name(joined["error_code"])
    mine = assignment(assigned if assigned is not None else {t: [0] for t in topics})
    synced = sync(conn, group, joined, {joined["member_id"]: mine}, instance_id=instance_id)
    assert errors.name(synced["error_code"]) == "NONE", errors.name(synced["error_code"])
    return conn, joined, synced


def commit(conn: Connection, group: str, offsets: Dict[tuple, Any], generation: int = -1,
           member_id: str = "", instance_id: Optional[str] = None,
           version: int = 8) -> List[str]:
    """OffsetCommit of {(topic, partition): offset, (offset, metadata) or (offset, metadata,
    leader epoch)}: the partitions' errors in the order given (topic names are the brokers'
    own, so not returned)."""
    topics: Dict[str, list] = {}
    for (topic, partition), value in offsets.items():
        value = value if isinstance(value, tuple) else (value,)
        offset = value[0]
        metadata = value[1] if len(value) > 1 else ""
        epoch = value[2] if len(value) > 2 else -1
        topics.setdefault(topic, []).append({
            "partition_index": partition, "committed_offset": offset,
            "committed_leader_epoch": epoch, "committed_metadata": metadata})
    answer = conn.call(OFFSET_COMMIT, version, group_id=group, generation_id=generation,
                       member_id=member_id, group_instance_id=instance_id,
                       topics=[{"name": t, "partitions": p} for t, p in topics.items()])
    by_partition = {(t["name"], p["partition_index"]): errors.name(p["error_code"])
                    for t in answer["topics"] for p in t["partitions"]}
    assert len(by_partition) == len(offsets), answer
    return [by_partition[tp] for tp in offsets]


def fetched(topics: Optional[List[Dict[str, Any]]], labels: Dict[str, str]) -> Dict[str, Any]:
    """An OffsetFetch answer's topics as {"label:partition": (offset, leader epoch, metadata,
    error)}, sorted, each topic by its label in `labels` (topic names are the brokers' own)."""
    return dict(sorted(
        (f"{labels.get(t['name'], t['name'])}:{p['partition_index']}",
         (p["committed_offset"], p.get("committed_leader_epoch", -1), p["metadata"],
          errors.name(p["error_code"])))
        for t in topics or [] for p in t["partitions"]))
