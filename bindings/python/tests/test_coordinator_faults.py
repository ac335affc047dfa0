"""A cluster's coordinator faults from Python (issue 20):
faults.hold_markers / release_markers keep a committed transaction's marker
on its partition's leader, so read_committed sees nothing of it until the
release; faults.kill_coordinator kills the broker coordinating a
transactional id or a group and says which. Records are counted; nothing
waits a fixed time (each wait is a deadline against hanging)."""

import pytest

import exactly
from conftest import eventually


def committed_values(cluster, topic):
    return [r.value for r in cluster.committed_records(topic, 0)]


def test_held_markers_hide_a_commit_until_released(exactly_cluster):
    c = exactly_cluster
    c.create_topic("py-held", 1, {"min.insync.replicas": 2},
                   replication_factor=3)
    leader = c.partition("py-held").leader
    c.faults.hold_markers(leader)
    sent = [f"v{i}".encode() for i in range(20)]
    with exactly.TransactionalProducer(c.bootstrap_servers,
                                       "py-held-writer") as p:
        with p.transaction() as txn:
            for v in sent:
                txn.send("py-held", value=v, partition=0)
        # The commit returned with the marker held on the leader: the
        # records are there, the transaction still open.
        assert eventually(lambda: any(
            "holding a WriteTxnMarkers request" in line
            for line in c.faults.history(node=leader)), seconds=60)
        offsets = c.offsets("py-held")
        assert offsets.log_end_offset == 20
        assert offsets.last_stable_offset == 0
        assert committed_values(c, "py-held") == []

        c.faults.release_markers(leader)
        assert eventually(lambda: committed_values(c, "py-held") == sent,
                          seconds=60)
        # Nothing held any more: the next transaction commits and shows.
        with p.transaction() as txn:
            txn.send("py-held", value=b"next", partition=0)
    assert eventually(
        lambda: committed_values(c, "py-held") == sent + [b"next"],
        seconds=60)


def test_kill_coordinator_names_the_broker_it_killed(exactly_cluster):
    c = exactly_cluster
    c.create_topic("py-kc", 1, replication_factor=3)
    with exactly.TransactionalProducer(c.bootstrap_servers, "py-kc") as p:
        with p.transaction() as txn:
            txn.send("py-kc", value=b"a", partition=0)
    killed = c.faults.kill_coordinator(transactional_id="py-kc")
    assert killed in (1, 2, 3)
    assert [c.node_running(n) for n in (1, 2, 3)] == \
        [n != killed for n in (1, 2, 3)]
    # The coordinator moves with its __transaction_state partition's
    # leadership: the next kill takes the new one, and the producer goes on.
    assert sum(c.node_running(n) for n in (1, 2, 3)) == 2
    moved = c.faults.kill_coordinator(transactional_id="py-kc")
    assert moved != killed
    c.restart("crash", node=killed)
    c.restart("crash", node=moved)

    group = c.faults.kill_coordinator(group="py-kc-group")
    assert not c.node_running(group)
    assert any("killed" in line for line in c.faults.history(node=group))
    with pytest.raises(ValueError):
        c.faults.kill_coordinator()
    with pytest.raises(ValueError):
        c.faults.kill_coordinator(transactional_id="a", group="b")
