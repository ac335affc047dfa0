"""exactly.testing.Broker(brokers=3) and the exactly_cluster fixture: a
cluster of bundled brokers in this process, and its per-broker faults from
Python, each shown with an idempotent producer (acks=all) and counted.
Nothing waits a fixed time: each test polls for an outcome until a deadline
(a guard against hanging), then asserts on it."""

import socket

import pytest

import exactly
from conftest import eventually
from exactly.errors import Error
from exactly.testing import Broker


def produce(servers, topic, prefix, count):
    """Sends "<prefix><i>" for i < count with an idempotent producer
    (acks=all) and returns the values acknowledged."""
    acked = []

    def on_delivery(error, report):
        if error is None:
            acked.append(report.value)

    with exactly.Producer(servers, linger_ms=2,
                          on_delivery=on_delivery) as p:
        for i in range(count):
            p.send(topic, f"{prefix}{i}".encode(), partition=0)
        p.flush(60)
    return acked


def values(broker, topic, node=None):
    return [r.value for r in broker.records(topic, 0, node=node)]


def refuses_connections(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return False
    except OSError:
        return True


def test_a_cluster_names_every_broker(exactly_cluster):
    assert exactly_cluster.brokers == 3
    ports = exactly_cluster.ports()
    assert len(set(ports)) == 3
    assert exactly_cluster.bootstrap_servers == ",".join(
        f"127.0.0.1:{p}" for p in ports)
    exactly_cluster.create_topic("orders", 2, replication_factor=3)
    p = exactly_cluster.partition("orders", 0)
    assert sorted(p.replicas) == [1, 2, 3]
    assert sorted(p.isr) == [1, 2, 3]
    assert p.leader in p.replicas


def test_killing_the_leader_loses_nothing_acknowledged(exactly_cluster):
    exactly_cluster.create_topic("kill", 1, {"min.insync.replicas": 2},
                                 replication_factor=3)
    before = exactly_cluster.partition("kill")
    acked = produce(exactly_cluster.bootstrap_servers, "kill", "a", 300)
    exactly_cluster.faults.kill(before.leader)
    assert not exactly_cluster.node_running(before.leader)
    after = exactly_cluster.partition("kill")
    assert after.leader not in (before.leader, -1)
    assert after.leader in before.isr
    assert before.leader not in after.isr
    acked += produce(exactly_cluster.bootstrap_servers, "kill", "b", 300)
    assert len(acked) == 600
    stored = values(exactly_cluster, "kill")
    assert sorted(stored) == sorted(acked), "each acknowledged record once"
    assert any("killed" in line for line in exactly_cluster.faults.history())

    exactly_cluster.restart("crash", node=before.leader)
    assert eventually(
        lambda: before.leader in exactly_cluster.partition("kill").isr)
    assert values(exactly_cluster, "kill", node=before.leader) == stored


@pytest.mark.exactly_cluster(replica_lag_time_max_ms=300)
def test_a_paused_follower_leaves_the_isr_and_rejoins(exactly_cluster):
    exactly_cluster.create_topic("pause", 1, replication_factor=3)
    placement = exactly_cluster.partition("pause")
    follower = placement.replicas[-1]
    assert follower != placement.leader
    exactly_cluster.faults.pause_replication(follower)
    acked = produce(exactly_cluster.bootstrap_servers, "pause", "a", 200)
    assert len(acked) == 200
    assert eventually(
        lambda: follower not in exactly_cluster.partition("pause").isr)
    acked += produce(exactly_cluster.bootstrap_servers, "pause", "b", 200)
    assert len(acked) == 400
    assert exactly_cluster.offsets(
        "pause", node=follower).log_end_offset == 0
    exactly_cluster.faults.resume_replication(follower)
    assert eventually(
        lambda: follower in exactly_cluster.partition("pause").isr)
    assert values(exactly_cluster, "pause", node=follower) == values(
        exactly_cluster, "pause")


def test_an_isolated_leader_is_replaced_and_rejoins_healed(exactly_cluster):
    exactly_cluster.create_topic("isolate", 1, replication_factor=3)
    acked = produce(exactly_cluster.bootstrap_servers, "isolate", "a", 100)
    old = exactly_cluster.partition("isolate").leader
    port = exactly_cluster.ports()[old - 1]

    exactly_cluster.faults.isolate(old)
    during = exactly_cluster.partition("isolate")
    assert during.leader not in (old, -1)
    assert old not in during.isr
    assert exactly_cluster.node_running(old)
    assert refuses_connections(port)
    others = ",".join(f"127.0.0.1:{p}" for i, p in
                      enumerate(exactly_cluster.ports(), 1) if i != old)
    acked += produce(others, "isolate", "b", 100)
    assert len(acked) == 200
    assert exactly_cluster.offsets("isolate", node=old).log_end_offset == 100

    exactly_cluster.faults.heal(old)
    assert not refuses_connections(port)
    assert eventually(
        lambda: old in exactly_cluster.partition("isolate").isr)
    assert exactly_cluster.partition("isolate").leader == during.leader
    assert sorted(values(exactly_cluster, "isolate", node=old)) == sorted(
        acked)


def test_power_loss_of_one_broker_loses_nothing_acknowledged(
        exactly_broker_factory, tmp_path):
    cluster = exactly_broker_factory(brokers=3, data_dir=str(tmp_path))
    cluster.create_topic("power", 1, {"min.insync.replicas": 2},
                         replication_factor=3)
    acked = produce(cluster.bootstrap_servers, "power", "a", 300)
    old = cluster.partition("power").leader
    # Paused so that what survived can be counted before it copies back.
    cluster.faults.pause_replication(old)
    cluster.restart("power_loss", node=old)
    assert cluster.offsets("power", node=old).log_end_offset < 300
    acked += produce(cluster.bootstrap_servers, "power", "b", 300)
    assert len(acked) == 600
    cluster.faults.resume_replication(old)
    assert eventually(lambda: old in cluster.partition("power").isr)
    assert sorted(values(cluster, "power")) == sorted(acked)
    assert values(cluster, "power", node=old) == values(cluster, "power")


def test_faults_name_a_broker_of_the_cluster(exactly_cluster):
    with pytest.raises(Error):
        exactly_cluster.faults.kill(4)
    with pytest.raises(ValueError):
        exactly_cluster.faults.fail_requests("produce", "NOT_LEADER_OR_FOLLOWER",
                                             node=0)
    exactly_cluster.faults.fail_requests("produce", "NOT_LEADER_OR_FOLLOWER",
                                         node=2)
    exactly_cluster.faults.set_replication_latency(3, 0.05)
    history = exactly_cluster.faults.history()
    assert any(line.startswith("broker 2: armed") for line in history)
    assert any(line.startswith("broker 3: 50 ms latency") for line in history)
    assert not any(line.startswith("broker 1:") for line in history)


def test_a_single_broker_has_no_cluster_faults():
    with Broker() as broker:
        assert broker.brokers == 1
        with pytest.raises(Error, match="cluster"):
            broker.faults.kill(1)
