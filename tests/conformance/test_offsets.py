"""Committed offsets as clients see them: OffsetCommit's checks (generation, member, topic,
metadata size), OffsetFetch at v7 (one group, RequireStable) and v8 (many groups), for named
partitions and for all of them, and OffsetDelete. Topics are named by label in observations
(each broker's topics have their own unique names)."""
import errors
from apis_group import (DESCRIBE_GROUPS, JOIN_GROUP, OFFSET_DELETE, OFFSET_FETCH, commit,
                        fetched, group_connection, join_fields, stable_member)
from apis_txn import ADD_OFFSETS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT
from side_by_side import RETRIABLE, scenario, unique, wait_until


def err(answer):
    return errors.name(answer["error_code"])


def fetch_v7(conn, group, topics, labels, require_stable=False):
    """OffsetFetch v7 of {topic: [partitions]} (None: every committed partition)."""
    answer = conn.call(OFFSET_FETCH, 7, group_id=group, require_stable=require_stable,
                       topics=None if topics is None else [
                           {"name": t, "partition_indexes": p} for t, p in topics.items()])
    return {"error": err(answer), "offsets": fetched(answer["topics"], labels)}


def fetch_v8(conn, groups, labels, require_stable=False):
    """OffsetFetch v8 of {group: {topic: [partitions]} or None}, by group label."""
    answer = conn.call(OFFSET_FETCH, 8, require_stable=require_stable, groups=[
        {"group_id": g, "topics": None if topics is None else [
            {"name": t, "partition_indexes": p} for t, p in topics.items()]}
        for g, topics in groups.items()])
    return {labels[g["group_id"]]: {"error": err(g), "offsets": fetched(g["topics"], labels)}
            for g in answer["groups"]}


@scenario
def test_commit_outside_the_group_and_fetch(broker):
    """Generation -1 without a member id is a commit from outside group management (simple
    consumers, admin tools): accepted for a group nobody joined, and fetched back with its
    metadata and leader epoch."""
    topic = broker.topic(partitions=2)
    group = unique("o-simple")
    labels = {topic: "t"}
    with group_connection(broker, group) as conn:
        first = commit(conn, group, {(topic, 0): (10, "meta", 4), (topic, 1): 20})
        again = commit(conn, group, {(topic, 0): (11, "", 5)})
        return {"commits": [first, again],
                "fetched": fetch_v7(conn, group, {topic: [0, 1]}, labels),
                "state": conn.call(DESCRIBE_GROUPS, 5,
                                   groups=[group])["groups"][0]["group_state"]}


@scenario
def test_commit_generation_and_member_checks(broker):
    """A member's commit must name its member id and current generation; otherwise
    ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID, and a generation -1 commit from outside is refused
    while the group has members."""
    topic = broker.topic()
    group = unique("o-generation")
    conn, joined, _ = stable_member(broker, group, topics=[topic])
    with conn:
        generation, member = joined["generation_id"], joined["member_id"]
        tp = {(topic, 0): 5}
        return {
            "member": commit(conn, group, tp, generation, member),
            "old_generation": commit(conn, group, tp, generation - 1, member),
            "newer_generation": commit(conn, group, tp, generation + 1, member),
            "unknown_member": commit(conn, group, tp, generation, member + "-x"),
            "outside": commit(conn, group, tp),
            "outside_with_member_id": commit(conn, group, tp, -1, member),
            "unknown_group_generation": commit(conn, unique("o-nobody"), tp, 1, "someone"),
            "unknown_group_member_only": commit(conn, unique("o-nobody"), tp, -1, "someone"),
            "fetched": fetch_v7(conn, group, {topic: [0]}, {topic: "t"}),
        }


@scenario
def test_static_member_commit(broker):
    """A static member commits with its instance id; another instance id, or its own with a
    stale member id, is refused."""
    topic = broker.topic()
    group = unique("o-static")
    conn, joined, _ = stable_member(broker, group, topics=[topic], instance_id="instance-1")
    with conn:
        generation, member = joined["generation_id"], joined["member_id"]
        tp = {(topic, 0): 5}
        return {"own": commit(conn, group, tp, generation, member, "instance-1"),
                "other_instance": commit(conn, group, tp, generation, member, "instance-2"),
                "stale_member_id": commit(conn, group, tp, generation, member + "-x",
                                          "instance-1"),
                "without_instance": commit(conn, group, tp, generation, member)}


@scenario
def test_commit_to_unknown_topic_or_partition(broker):
    """Each partition of a commit is answered on its own: a topic or partition that does not
    exist is UNKNOWN_TOPIC_OR_PARTITION and not stored, the others are committed."""
    topic = broker.topic()
    missing = unique("o-missing-topic")
    group = unique("o-unknown-topic")
    labels = {topic: "t", missing: "missing"}
    with group_connection(broker, group) as conn:
        answer = commit(conn, group, {(topic, 0): 1, (topic, 7): 2, (missing, 0): 3})
        return {"commit": answer,
                "fetched": fetch_v7(conn, group, {topic: [0, 7], missing: [0]}, labels),
                "all": fetch_v7(conn, group, None, labels)}


@scenario
def test_commit_metadata_size(broker):
    """offset.metadata.max.bytes (4096 by default): longer metadata is refused for that
    partition (OFFSET_METADATA_TOO_LARGE), at the limit it is kept; null metadata reads back
    as empty."""
    topic = broker.topic(partitions=3)
    group = unique("o-metadata")
    with group_connection(broker, group) as conn:
        answer = commit(conn, group, {(topic, 0): (1, "m" * 4096), (topic, 1): (2, "m" * 4097),
                                      (topic, 2): (3, None)})
        offsets = fetch_v7(conn, group, {topic: [0, 1, 2]}, {topic: "t"})
        sizes = {k: (o, e, None if m is None else len(m), error)
                 for k, (o, e, m, error) in offsets["offsets"].items()}
        return {"commit": answer, "fetched": sizes}


@scenario
def test_fetch_unknown_offsets(broker):
    """Nothing committed reads as offset -1 and no error: for an unknown group, for a partition
    of a known group without a commit, and for a topic that does not exist."""
    topic = broker.topic(partitions=2)
    missing = unique("o-missing-topic")
    group, unknown = unique("o-fetch"), unique("o-fetch-unknown")
    labels = {topic: "t", missing: "missing", group: "group", unknown: "unknown"}
    with group_connection(broker, group) as conn:
        commit(conn, group, {(topic, 0): 9})
        wanted = {topic: [0, 1], missing: [3]}
        return {"v7_known": fetch_v7(conn, group, wanted, labels),
                "v7_unknown_group": fetch_v7(conn, unknown, wanted, labels),
                "v7_unknown_group_all": fetch_v7(conn, unknown, None, labels),
                "v8": fetch_v8(conn, {group: wanted, unknown: wanted}, labels)}


@scenario
def test_fetch_all_committed_offsets(broker):
    """OffsetFetch with null topics answers every partition the group committed, across topics
    (what admin tools and kafka-consumer-groups.sh --describe read), at v7 and v8."""
    first, second = broker.topic(partitions=2), broker.topic()
    group = unique("o-all")
    labels = {first: "first", second: "second", group: "group"}
    with group_connection(broker, group) as conn:
        commit(conn, group, {(first, 0): 1, (first, 1): (2, "x"), (second, 0): (3, "", 7)})
        return {"v7": fetch_v7(conn, group, None, labels),
                "v8": fetch_v8(conn, {group: None}, labels),
                "v7_empty_list": fetch_v7(conn, group, {}, labels)}


@scenario
def test_fetch_many_groups_v8(broker):
    """OffsetFetch v8 (KIP-709) answers several groups in one request, each with its own
    partitions (named or all) and its own error."""
    topic = broker.topic(partitions=2)
    a, b, c = unique("o-many-a"), unique("o-many-b"), unique("o-many-c")
    labels = {topic: "t", a: "a", b: "b", c: "c"}
    with group_connection(broker, a) as conn_a, group_connection(broker, b) as conn_b:
        commit(conn_a, a, {(topic, 0): 10, (topic, 1): 11})
        commit(conn_b, b, {(topic, 1): (21, "b")})
        with group_connection(broker, c) as conn:
            return {"named_and_all": fetch_v8(conn, {a: {topic: [0]}, b: None, c: None},
                                              labels),
                    "same_partitions": fetch_v8(conn, {a: {topic: [0, 1]}, b: {topic: [0, 1]},
                                                       c: {topic: [0, 1]}}, labels,
                                                require_stable=True)}


@scenario
def test_require_stable_waits_for_pending_transactional_offsets(broker):
    """KIP-447: OffsetFetch v7+ with RequireStable answers UNSTABLE_OFFSET_COMMIT for a
    partition whose offset a transaction still holds (read_committed consumers retry), and
    without it the last committed offset; once the transaction commits, the new offset."""
    topic = broker.topic(partitions=2)
    group, txn_id = unique("o-stable"), unique("o-stable-txn")
    labels = {topic: "t"}
    with group_connection(broker, group) as conn:
        commit(conn, group, {(topic, 0): 5, (topic, 1): 6})
        producer = broker.init_producer_id(txn_id)
        pid, epoch = producer["producer_id"], producer["producer_epoch"]
        added = {}

        def add_offsets():
            with broker.coordinator(txn_id, 1) as txn:
                added.update(txn.call(ADD_OFFSETS_TO_TXN, 3, transactional_id=txn_id,
                                      producer_id=pid, producer_epoch=epoch, group_id=group))
            return err(added) not in RETRIABLE
        wait_until(add_offsets, "AddOffsetsToTxn")
        staged = conn.call(TXN_OFFSET_COMMIT, 3, transactional_id=txn_id, group_id=group,
                           producer_id=pid, producer_epoch=epoch, generation_id=-1,
                           member_id="", group_instance_id=None, topics=[{
                               "name": topic, "partitions": [{
                                   "partition_index": 0, "committed_offset": 50,
                                   "committed_leader_epoch": -1, "committed_metadata": ""}]}])
        pending = {
            "stable": fetch_v7(conn, group, {topic: [0, 1]}, labels, require_stable=True),
            "unstable_allowed": fetch_v7(conn, group, {topic: [0, 1]}, labels),
            "stable_all": fetch_v7(conn, group, None, labels, require_stable=True),
            "v8_stable": fetch_v8(conn, {group: {topic: [0, 1]}}, {group: "g", **labels},
                                  require_stable=True)}
        with broker.coordinator(txn_id, 1) as txn:
            ended = txn.call(END_TXN, 3, transactional_id=txn_id, producer_id=pid,
                             producer_epoch=epoch, committed=True)
        after = {}

        def settled():
            after.update(fetch_v7(conn, group, {topic: [0, 1]}, labels, require_stable=True))
            return all(e == "NONE" for *_, e in after["offsets"].values())
        wait_until(settled, "the transaction's offsets to be committed")
        return {"add_offsets": err(added),
                "txn_offset_commit": [err(p) for t in staged["topics"] for p in t["partitions"]],
                "pending": pending, "end_txn": err(ended), "after": after}


@scenario
def test_offset_delete(broker):
    """OffsetDelete (KIP-496) removes a group's offsets, except for topics a member of the
    (consumer) group subscribes to: GROUP_SUBSCRIBED_TO_TOPIC for those; an unknown group is
    GROUP_ID_NOT_FOUND, a non-consumer group with members NON_EMPTY_GROUP."""
    consumed, old = broker.topic(), broker.topic(partitions=2)
    group, empty, other_type = unique("o-del"), unique("o-del-empty"), unique("o-del-connect")
    labels = {consumed: "consumed", old: "old"}
    conn, joined, _ = stable_member(broker, group, topics=[consumed])
    with conn:
        commit(conn, group, {(consumed, 0): 1, (old, 0): 2, (old, 1): 3},
               joined["generation_id"], joined["member_id"])

        def delete(group_id, topics):
            answer = conn.call(OFFSET_DELETE, 0, group_id=group_id, topics=[
                {"name": t, "partitions": [{"partition_index": p} for p in parts]}
                for t, parts in topics.items()])
            return {"error": err(answer),
                    "partitions": sorted((labels.get(t["name"], "missing"),
                                          p["partition_index"], err(p))
                                         for t in answer["topics"] for p in t["partitions"])}
        in_use = delete(group, {consumed: [0], old: [0]})
        after = fetch_v7(conn, group, None, labels)
        commit(conn, empty, {(consumed, 0): 4})
        from_empty = delete(empty, {consumed: [0], old: [0]})
        empty_after = fetch_v7(conn, empty, None, labels)
        missing = delete(group, {unique("o-del-missing"): [0]})
        unknown = delete(unique("o-del-unknown"), {old: [0]})
        with group_connection(broker, other_type) as other:
            first = other.call(JOIN_GROUP, 9, **join_fields(other_type, protocol_type="connect"))
            other.call(JOIN_GROUP, 9, **join_fields(other_type, member_id=first["member_id"],
                                                     protocol_type="connect"))
            non_consumer = delete(other_type, {old: [0]})
        return {"in_use": in_use, "after": after, "from_empty": from_empty,
                "empty_after": empty_after, "missing_topic": missing, "unknown_group": unknown,
                "non_consumer": non_consumer}


@scenario
def test_older_commit_and_fetch_versions(broker):
    """The versions older clients still send: OffsetCommit v2 (with a retention time) and v5,
    OffsetFetch v1 (no group-level error) and v5 (leader epochs), the same offsets read back."""
    topic = broker.topic(partitions=2)
    group = unique("o-versions")
    labels = {topic: "t"}
    with group_connection(broker, group) as conn:
        v2 = commit(conn, group, {(topic, 0): 1}, version=2)
        v5 = commit(conn, group, {(topic, 1): (2, "five")}, version=5)
        wanted = [{"name": topic, "partition_indexes": [0, 1]}]
        v1 = conn.call(OFFSET_FETCH, 1, group_id=group, topics=wanted)
        v5_fetch = conn.call(OFFSET_FETCH, 5, group_id=group, topics=wanted)
        v5_all = conn.call(OFFSET_FETCH, 5, group_id=group, topics=None)
        return {"commits": [v2, v5], "fetch_v1": fetched(v1["topics"], labels),
                "fetch_v5": (err(v5_fetch), fetched(v5_fetch["topics"], labels)),
                "fetch_v5_all": (err(v5_all), fetched(v5_all["topics"], labels))}
